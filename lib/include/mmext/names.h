/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Anonymous VMA names: prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME).
 * A named range shows as [anon:NAME] (private) or [anon_shmem:NAME] (shared
 * anonymous, Linux 6.2+) in /proc/PID/maps. Naming splits VMAs, and differently
 * named neighbours never merge, so naming many small ranges raises the VMA count.
 *
 * The kernel option CONFIG_ANON_VMA_NAME is off in many distribution kernels; these
 * functions then fail with -EOPNOTSUPP rather than pretend to have named anything.
 * All functions are thread-safe and use no signals.
 */
#ifndef MMEXT_NAMES_H
#define MMEXT_NAMES_H

#include <mmext/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Longest name in bytes, without the NUL (the kernel's limit is 80 with it). */
#define MMEXT_NAME_MAX 79

/*
 * Check a name without calling the kernel: 0, -ENAMETOOLONG (over MMEXT_NAME_MAX),
 * -EINVAL (empty, or a byte outside printable ASCII or one of [ ] \ $ `), -EFAULT
 * for NULL.
 */
MMEXT_API int mmext_name_check(const char *name);

/*
 * Name (or rename) [addr, addr + len) of the calling process. The range may span
 * several VMAs; each must be anonymous (private or shared).
 * Returns 0, or:
 *  -EINVAL       unaligned addr, zero or wrapping len, or a bad name (as above)
 *  -ENAMETOOLONG name longer than MMEXT_NAME_MAX
 *  -EOPNOTSUPP   the kernel cannot name memory (see mmext_probe(MMEXT_FEAT_ANON_NAME))
 *  -ENOMEM       part of the range is unmapped (the mapped part may be named)
 *  -EBADF        part of the range is file-backed (or shared anonymous before 6.2)
 */
MMEXT_API int mmext_name_set(void *addr, size_t len, const char *name);

/* Remove the name from [addr, addr + len); same errors as mmext_name_set(). */
MMEXT_API int mmext_name_clear(void *addr, size_t len);

/*
 * Copy the anon name of the VMA containing addr in process pid (0 = self) into buf
 * (NUL-terminated). Returns the name's length, or:
 *  -ENODATA  the VMA has no anonymous name
 *  -ENOENT   nothing is mapped at addr
 *  -ERANGE   buf is too small (size must exceed the length)
 *  -ESRCH/-EACCES/-EPERM as for mmext_maps_open()
 * Works on any kernel: without CONFIG_ANON_VMA_NAME every VMA is simply unnamed.
 */
MMEXT_API int mmext_name_get(pid_t pid, const void *addr, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* MMEXT_NAMES_H */
