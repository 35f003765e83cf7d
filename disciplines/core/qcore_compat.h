/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * qcore_compat.h - the only place the core touches its environment.
 *
 * The discipline core compiles unchanged in the Linux kernel, ns-3, ns-2 and
 * userspace.  Everything it needs from outside (fixed-width integers, bool,
 * 64-bit division, snprintf, inlining control for the packet paths) is
 * mapped here.
 */
#ifndef QCORE_COMPAT_H
#define QCORE_COMPAT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/string.h>
#define qcore_div64(a, b) div64_u64((a), (b))
#define qcore_noinline noinline
#define qcore_always_inline __always_inline
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int32_t s32;
typedef int64_t s64;
#define qcore_div64(a, b) ((u64)(a) / (u64)(b))
/* As the kernel's noinline and __always_inline. */
#define qcore_noinline __attribute__((__noinline__))
#define qcore_always_inline inline __attribute__((__always_inline__))
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))	/* as <linux/kernel.h> */
#endif
#endif

#endif /* QCORE_COMPAT_H */
