#ifndef APNS_MOCK_CFILESPACE_H
#define APNS_MOCK_CFILESPACE_H

#include <stdint.h>

/// Reserves `length` bytes of disk for the open file from `offset`, keeping its size (Linux `fallocate` with
/// `FALLOC_FL_KEEP_SIZE`, which Swift's Glibc module does not declare: it is built without `_GNU_SOURCE`).
/// Returns 0, or the `errno` value: `EOPNOTSUPP` where the file system or the platform cannot.
int apns_mock_reserve_file_space(int descriptor, int64_t offset, int64_t length);

#endif
