# SPDX-License-Identifier: BSD-3-Clause
# rpma_fabric.m4 -- configure the fabric provider (libfabric)
#
# Sets rpma_have_fabric=yes|no, AM_CONDITIONAL HAVE_FABRIC and RPMA_HAVE_FABRIC
# in config.h (seen only by the provider registry).
AC_DEFUN([RPMA_CHECK_FABRIC], [
AC_ARG_ENABLE([fabric],
	[AS_HELP_STRING([--enable-fabric@<:@=yes|no|auto@:>@], [build the fabric provider (default: auto)])],
	[], [enable_fabric=auto])
rpma_have_fabric=no
AS_IF([test "x$enable_fabric" != xno], [
	PKG_CHECK_MODULES([FABRIC], [libfabric >= 1.10], [rpma_have_fabric=yes], [rpma_have_fabric=no])
	AS_IF([test "x$enable_fabric" = xyes && test "x$rpma_have_fabric" != xyes],
		[AC_MSG_ERROR([--enable-fabric: libfabric >= 1.10 not found by pkg-config (install libfabric-dev)])])
])
AS_IF([test "x$rpma_have_fabric" = xyes],
	[AC_DEFINE([RPMA_HAVE_FABRIC], [1], [the fabric provider is built])])
AM_CONDITIONAL([HAVE_FABRIC], [test "x$rpma_have_fabric" = xyes])
])
