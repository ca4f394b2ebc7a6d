#define _GNU_SOURCE
#include "CFileSpace.h"

#include <errno.h>
#include <fcntl.h>

int apns_mock_reserve_file_space(int descriptor, int64_t offset, int64_t length) {
#if defined(__linux__)
    return fallocate(descriptor, FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)length) == 0 ? 0 : errno;
#else
    (void)descriptor;
    (void)offset;
    (void)length;
    return EOPNOTSUPP;
#endif
}
