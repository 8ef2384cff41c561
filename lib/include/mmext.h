/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libmmext: userspace side of the mmext memory-management extensions.
 * Each area has its own header; this one includes them all. The vendored kernel
 * definitions (<mmext/uapi.h>) are not included: none of the API needs them.
 */
#ifndef MMEXT_H
#define MMEXT_H

#include <mmext/common.h>
#include <mmext/probe.h>
#include <mmext/names.h>
#include <mmext/vma.h>
#include <mmext/writewatch.h>
#include <mmext/pattern.h>
#include <mmext/fork.h>

#endif /* MMEXT_H */
