// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Anonymous VMA names: validation, prctl, and reading names back from maps. */
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>

#include <mmext/uapi.h>
#include "internal.h"

MMEXT_API int mmext_name_check(const char *name)
{
	const unsigned char *p;
	size_t len;

	if (!name)
		return -EFAULT;
	len = strnlen(name, MMEXT_NAME_MAX + 1);
	if (len > MMEXT_NAME_MAX)
		return -ENAMETOOLONG;
	if (!len)
		return -EINVAL;
	/* The kernel's rule: printable ASCII except the characters maps uses to quote. */
	for (p = (const unsigned char *)name; *p; p++)
		if (*p < 0x20 || *p > 0x7e || strchr("[]\\$`", *p))
			return -EINVAL;
	return 0;
}

static int set_name(void *addr, size_t len, const char *name)
{
	uintptr_t end;
	int ret;

	ret = mmext__range(addr, len, &end);
	if (ret)
		return ret;
	if (name) {
		ret = mmext_name_check(name);
		if (ret)
			return ret;
	}
	if (!prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)addr,
		   (unsigned long)(end - (uintptr_t)addr), (unsigned long)name))
		return 0;
	ret = -errno;
	/* Arguments were checked above, so EINVAL means the kernel cannot name memory. */
	if (ret == -EINVAL && !mmext__have(MMEXT_FEAT_ANON_NAME))
		return -EOPNOTSUPP;
	return ret;
}

MMEXT_API int mmext_name_set(void *addr, size_t len, const char *name)
{
	if (!name)
		return -EFAULT;
	return set_name(addr, len, name);
}

MMEXT_API int mmext_name_clear(void *addr, size_t len)
{
	return set_name(addr, len, NULL);
}

MMEXT_API int mmext_name_get(pid_t pid, const void *addr, char *buf, size_t size)
{
	MMEXT_OPTS(mmext_maps_opts, opts);
	struct mmext_maps *m;
	struct mmext_vma v;
	int ret;

	if (!buf && size)
		return -EFAULT;
	ret = mmext_maps_open(pid, &opts, &m);
	if (ret)
		return ret;
	ret = mmext_maps_find(m, (uintptr_t)addr, 0, &v);
	if (!ret) {
		if (!v.anon_name)
			ret = -ENODATA;
		else if (v.anon_name_len >= size)
			ret = -ERANGE;
		else {
			memcpy(buf, v.anon_name, v.anon_name_len);
			buf[v.anon_name_len] = '\0';
			ret = v.anon_name_len;
		}
	}
	mmext_maps_close(m);
	return ret;
}
