// SPDX-License-Identifier: MIT
/*
 * profile.c - names of the profiles' capabilities (see profile.h)
 */
#include <stdio.h>

#include <pto-private/compiler.h>
#include <pto-private/profile.h>

static const char *const cap_names[] = {
	"TILE_HW", "VEC_NATIVE", "CUBE_HW", "MX_FORMAT", "FRACTAL_HW", "FP8",
	"VEC_UNALIGNED_STORE", "VEC_ALIGN_STATE", "HIFLOAT8_FP4",
	"BLOCK_COMM", "ATOMIC_STORE", "PAIR_SELECT", "TEXTRACT_COMPACT",
	"VLANE_REDUCE",
};

const char *pto_profile_name(uint32_t id)
{
	size_t i;

	for (i = 0; i < PTO_ARRAY_SIZE(pto_profiles); i++)
		if (pto_profiles[i].id == id)
			return pto_profiles[i].name;
	return "unknown";
}

size_t pto_caps_format(uint64_t caps, char *buf, size_t len)
{
	size_t n = 0, i;

	if (len)
		buf[0] = 0;
	for (i = 0; i < 64 && n < len; i++) {
		if (!(caps & (1ULL << i)))
			continue;
		if (i < PTO_ARRAY_SIZE(cap_names))
			n += (size_t)snprintf(buf + n, len - n, "%s%s",
					      n ? " " : "", cap_names[i]);
		else
			n += (size_t)snprintf(buf + n, len - n, "%sbit%zu",
					      n ? " " : "", i);
	}
	return n;
}
