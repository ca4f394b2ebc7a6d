#ifndef APNS_MOCK_CNGHTTP2_SHIM_H
#define APNS_MOCK_CNGHTTP2_SHIM_H
#include <nghttp2/nghttp2.h>
#endif
