# SPDX-License-Identifier: MIT
#
# ASan + UBSan (with float-cast-overflow, which GCC leaves out of
# "undefined"), every report fatal: the native tests' sanitizer builds
# and the end-to-end suite's (build/asan). Included by the top Makefile
# and scripts/Makefile.user.
SANFLAGS := -fsanitize=address,undefined,float-cast-overflow \
	-fno-omit-frame-pointer \
	-fno-sanitize-recover=all
