/*
 * Vector sets compiled into the KAT driver (vectors_*.c) for the families
 * that have no KAT file. Weak, so the driver also links without them.
 */
#ifndef HASHQ_TEST_VECTORS_H
#define HASHQ_TEST_VECTORS_H

/* md5, crc32, crc32c, crc64nvme: known answers and cross-path checks;
 * returns the number of failures. */
int hq_test_checksums(void) __attribute__((weak));
/* hq_update_fd's mapped reads (file_map.c); returns the failures. */
int hq_test_file_map(void) __attribute__((weak));

#endif
