# SPDX-License-Identifier: MIT
#
# ASan + UBSan, every report fatal: the native tests' sanitizer builds
# and the end-to-end suite's (build/asan). Included by the top Makefile
# and scripts/Makefile.user.
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
