// SPDX-License-Identifier: GPL-2.0
/*
 * pto_fuzz: structure-aware random operations on /dev/pto0 from several
 * processes at once, SIGKILLed at random moments and replaced (the engine
 * is pto_fuzz.h). Each worker holds up to FZ_FILES open files of the
 * device and issues, mostly with valid arguments and otherwise mutated
 * ones: open / close / dup, SET_ROLE of every role and invalid ones, every
 * ioctl of <linux/pto.h> (sizes around the structure's, flag bits,
 * non-zero pads, arguments at the end of a page, read-only or unmapped,
 * core masks and ids out of range, handles of this file, of another file
 * and freed ones, waits with short or interrupted timeouts, HWS
 * configurations with fields out of range, pins of ranges in client
 * files of the process, of other files, of no file), unknown ioctls, mmap /
 * munmap / mprotect / mremap of the register file and of GM at random
 * offsets, lengths, protections and flags, loads and stores through
 * every mapping, read() / poll(), and fork() of short-lived children
 * that inherit all of it. A quarter of the workers run as nobody.
 *
 * Findings (the test fails): a process dead of a signal it was not sent
 * (e.g. SIGSEGV in a mapping the device accepted), a hang, an errno
 * outside the set the ABI allows, a result that contradicts what the
 * worker knows (a refused mmap of its own buffer, a lookup of its own
 * buffer that fails, a pin of a range in a live buffer of a client file
 * that fails, a fresh buffer that is not zero, PROT_EXEC or
 * growth accepted...), and at the end the device's counters not back to
 * their values before the run or the kernel log with a warning
 * (run.sh's dmesg-check). EPERM and EACCES are always acceptable.
 *
 *   PTO_FUZZ_SEED=0x... PTO_FUZZ_OPS=1000000 build/selftests/pto_fuzz
 *
 * Environment: see pto_fuzz.h (PTO_FUZZ_SEED, _OPS (default 100000),
 * _PROCS (6), _KILL_MS (mean time between two SIGKILLs, 100 ms)).
 */
#include "kselftest_harness.h"
#include "pto_test.h"
#include "pto_fuzz.h"

#include <sys/time.h>

#define FZ_OPS_DEFAULT		200000
#define FZ_PROCS_DEFAULT	6
#define FZ_KILL_MS_DEFAULT	100

#define FZ_FILES	8
#define FZ_BUFS		48
#define FZ_MAPS		16
#define FZ_KIDS		4
#define FZ_PINS		16
#define FZ_SKIP		1	/* an operation that does not apply now */
/*
 * The role of a file a fork child inherited without one: the worker may
 * have given it one since.
 */
#define FZ_ROLE_UNKNOWN	0xff

#define FZ_REGS_PAGES	(PAGE_ALIGN_UP(PTO_REGS_SIZE) / PTO_PAGE)
#define PAGE_ALIGN_UP(x) (((x) + PTO_PAGE - 1) & ~(PTO_PAGE - 1))

enum {
	FZ_OPEN, FZ_CLOSE, FZ_DUP, FZ_SET_ROLE, FZ_ABI_VERSION, FZ_GET_INFO,
	FZ_GM_ALLOC, FZ_GM_FREE, FZ_GM_LOOKUP, FZ_CORE_ATTACH, FZ_CORE_DETACH,
	FZ_CORE_WAIT, FZ_KICK, FZ_RAISE_IRQ, FZ_IRQ_WAIT, FZ_HWS_GET,
	FZ_HWS_SET, FZ_BAD_IOCTL, FZ_MMAP, FZ_MUNMAP, FZ_MPROTECT, FZ_MREMAP,
	FZ_TOUCH, FZ_READ, FZ_POLL, FZ_FORK, FZ_GM_PIN, FZ_GM_UNPIN,
	FZ_CORE_WAIT_ANY, FZ_NR
};

static const char *const fz_names[FZ_NR] = {
	"open", "close", "dup", "SET_ROLE", "ABI_VERSION", "GET_INFO",
	"GM_ALLOC", "GM_FREE", "GM_LOOKUP", "CORE_ATTACH", "CORE_DETACH",
	"CORE_WAIT", "KICK", "RAISE_IRQ", "IRQ_WAIT", "HWS_CONFIG get",
	"HWS_CONFIG set", "bad ioctl", "mmap", "munmap", "mprotect", "mremap",
	"touch", "read", "poll", "fork", "GM_PIN", "GM_UNPIN", "CORE_WAIT_ANY",
};

/* Relative frequency of each operation. */
static const unsigned int fz_weights[FZ_NR] = {
	[FZ_OPEN] = 40, [FZ_CLOSE] = 15, [FZ_DUP] = 8, [FZ_SET_ROLE] = 40,
	[FZ_ABI_VERSION] = 8, [FZ_GET_INFO] = 15, [FZ_GM_ALLOC] = 90,
	[FZ_GM_FREE] = 60, [FZ_GM_LOOKUP] = 50, [FZ_CORE_ATTACH] = 45,
	[FZ_CORE_DETACH] = 35, [FZ_CORE_WAIT] = 40, [FZ_KICK] = 35,
	[FZ_RAISE_IRQ] = 25, [FZ_IRQ_WAIT] = 25, [FZ_HWS_GET] = 15,
	[FZ_HWS_SET] = 25, [FZ_BAD_IOCTL] = 25, [FZ_MMAP] = 80,
	[FZ_MUNMAP] = 45, [FZ_MPROTECT] = 20, [FZ_MREMAP] = 20,
	[FZ_TOUCH] = 100, [FZ_READ] = 20, [FZ_POLL] = 15, [FZ_FORK] = 3,
	[FZ_GM_PIN] = 40, [FZ_GM_UNPIN] = 30, [FZ_CORE_WAIT_ANY] = 30,
};

/* What the run knows of the device (in the engine's shared memory). */
struct fz_dev {
	struct pto_info info;
	struct pto_hws_cfg orig;	/* the configuration before the run */
	uint32_t unpriv;		/* workers that ran as nobody */
	uint64_t checks;		/* invariants checked */
};

/* An open file of the device: up to two descriptors (dup) of it. */
struct fz_file {
	int fd[2];
	uint32_t id;			/* never reused; 0: slot free */
	uint32_t role;
	bool rdonly;
	bool inherited;			/* from the worker, in a fork child */
	__u64 cores[PTO_CORE_MASK_WORDS];	/* attached by this file */
};

/* A buffer this process allocated. */
struct fz_buf {
	uint32_t fid;			/* its file */
	uint32_t handle;
	uint64_t dev, len, off;
	bool live;			/* handle not freed, file not closed */
	bool used;
};

enum { FZM_REGS, FZM_GM, FZM_BUF };

/* A pin this process's AICPU file holds. */
struct fz_pin {
	uint32_t fid;			/* the AICPU file; 0: slot free */
	uint32_t id;
};

/* A mapping the device accepted. */
struct fz_map {
	uint8_t *p;
	size_t len;
	uint64_t off;			/* mmap offset of p */
	int prot;
	int kind;
	bool exec_regs;			/* an executor's view of the registers */
	bool nostore;			/* a child's, of a file it inherited */
	bool used;
};

struct fz_w {
	struct pto_fz *fz;
	struct fz_dev *dev;
	struct pto_fz_slot *slot;	/* NULL in a fork child */
	struct pto_rng *r;
	bool child;
	bool nobody;			/* no CAP_SYS_ADMIN: no AICPU, no executor */
	bool clean;			/* the last ioctl went as built */
	uint32_t next_id;
	struct fz_file files[FZ_FILES];
	struct fz_buf bufs[FZ_BUFS];
	struct fz_map maps[FZ_MAPS];
	struct fz_pin pins[FZ_PINS];
	pid_t kids[FZ_KIDS];
	uint8_t *scratch;		/* 2 pages, then a PROT_NONE page */
	uint8_t *ro, *ro_rw;		/* one page: read-only and writable views */
};

#define FZ_FAIL(w, fmt, ...) \
	pto_fz_finding((w)->fz, "gen %u %s: " fmt, \
		       (w)->slot ? (w)->slot->gen : 0, \
		       (w)->child ? "(child)" : "", ##__VA_ARGS__)

static inline uint64_t fz_rand(struct fz_w *w, uint64_t n)
{
	return pto_rng_below(w->r, n);
}

static inline bool fz_pct(struct fz_w *w, unsigned int pct)
{
	return pto_rng_pct(w->r, pct);
}

static void fz_note(struct fz_w *w, uint64_t a0, uint64_t a1, uint64_t a2,
		    uint64_t a3)
{
	if (w->slot)
		pto_fz_begin(w->slot, w->slot->op, a0, a1, a2, a3);
}

static void fz_checked(struct fz_w *w)
{
	__atomic_fetch_add(&w->dev->checks, 1, __ATOMIC_RELAXED);
}

static bool fz_denied(int ret)
{
	return ret == -EPERM || ret == -EACCES;
}

/* The errnos the device's ioctls may return. */
static void fz_errno_ok(struct fz_w *w, const char *what, int ret)
{
	switch (-ret) {
	case 0: case EINVAL: case E2BIG: case EFAULT: case ENOTTY:
	case EACCES: case EPERM: case EBUSY: case ENOENT: case ENOMEM:
	case ENOSPC: case ETIMEDOUT: case EINTR: case ENODEV: case EAGAIN:
		return;
	}
	if (ret > 0)
		return;
	FZ_FAIL(w, "%s returned errno %d (%s)", what, -ret, strerror(-ret));
}

/* ---- files ---------------------------------------------------------------- */

/*
 * fz_errno_ok() for a command that changes the device: -EBADF too, but
 * only on a file opened read-only (and there it is what it must say).
 */
static void fz_errno_rdonly_ok(struct fz_w *w, const struct fz_file *f,
			       const char *what, int ret)
{
	if (ret != -EBADF)
		fz_errno_ok(w, what, ret);
	else if (!f->rdonly)
		FZ_FAIL(w, "%s returned EBADF on a file opened for writing",
			what);
}

static bool fz_file_open(const struct fz_file *f)
{
	return f->id && (f->fd[0] >= 0 || f->fd[1] >= 0);
}

static int fz_fd(struct fz_w *w, struct fz_file *f)
{
	if (f->fd[0] >= 0 && (f->fd[1] < 0 || fz_pct(w, 50)))
		return f->fd[0];
	return f->fd[1];
}

/*
 * A random open file, one of role @role with probability @pct; @own: not
 * one a fork child inherited (its state belongs to the worker's records).
 */
static struct fz_file *fz_pick_file(struct fz_w *w, int role, unsigned int pct,
				    bool own)
{
	struct fz_file *cand[FZ_FILES], *pref[FZ_FILES];
	unsigned int i, n = 0, np = 0;

	for (i = 0; i < FZ_FILES; i++) {
		struct fz_file *f = &w->files[i];

		if (!fz_file_open(f) || (own && f->inherited))
			continue;
		cand[n++] = f;
		if ((int)f->role == role)
			pref[np++] = f;
	}
	if (np && fz_pct(w, pct))
		return pref[fz_rand(w, np)];
	return n ? cand[fz_rand(w, n)] : NULL;
}

/*
 * A file for an operation of @role: one of that role mostly; when the
 * process has none, usually nothing (the operation is skipped), else any
 * file (a role the ioctl refuses).
 */
static struct fz_file *fz_pick_role(struct fz_w *w, int role, bool own)
{
	unsigned int i;

	for (i = 0; i < FZ_FILES; i++)
		if (fz_file_open(&w->files[i]) && (int)w->files[i].role == role &&
		    !(own && w->files[i].inherited))
			return fz_pick_file(w, role, 85, own);
	return fz_pct(w, 25) ? fz_pick_file(w, -1, 0, own) : NULL;
}

/* The last descriptor of @f closed: everything of the file went. */
static void fz_file_gone(struct fz_w *w, struct fz_file *f)
{
	unsigned int i;

	for (i = 0; i < FZ_BUFS; i++)
		if (w->bufs[i].used && w->bufs[i].fid == f->id)
			w->bufs[i].live = false;
	for (i = 0; i < FZ_PINS; i++)
		if (w->pins[i].fid == f->id)
			w->pins[i].fid = 0;
	memset(f->cores, 0, sizeof(f->cores));
	f->role = PTO_ROLE_NONE;
	f->id = 0;
}

/* ---- buffers and mappings ---------------------------------------------------- */

static struct fz_buf *fz_pick_buf(struct fz_w *w, uint32_t fid, bool live)
{
	struct fz_buf *cand[FZ_BUFS];
	unsigned int i, n = 0;

	for (i = 0; i < FZ_BUFS; i++) {
		struct fz_buf *b = &w->bufs[i];

		if (b->used && b->live == live && (!fid || b->fid == fid))
			cand[n++] = b;
	}
	return n ? cand[fz_rand(w, n)] : NULL;
}

static unsigned int fz_live_bufs(struct fz_w *w)
{
	unsigned int i, n = 0;

	for (i = 0; i < FZ_BUFS; i++)
		n += w->bufs[i].used && w->bufs[i].live;
	return n;
}

/* A slot for a new buffer record: a free one, else the oldest dead one. */
static struct fz_buf *fz_new_buf(struct fz_w *w)
{
	unsigned int i;

	for (i = 0; i < FZ_BUFS; i++)
		if (!w->bufs[i].used)
			return &w->bufs[i];
	for (i = 0; i < FZ_BUFS; i++)
		if (!w->bufs[i].live)
			return &w->bufs[i];
	return NULL;
}

static struct fz_map *fz_new_map(struct fz_w *w)
{
	unsigned int i;

	for (i = 0; i < FZ_MAPS; i++)
		if (!w->maps[i].used)
			return &w->maps[i];
	return NULL;
}

static struct fz_map *fz_pick_map(struct fz_w *w, int kind)
{
	struct fz_map *cand[FZ_MAPS];
	unsigned int i, n = 0;

	for (i = 0; i < FZ_MAPS; i++)
		if (w->maps[i].used && (kind < 0 || w->maps[i].kind == kind))
			cand[n++] = &w->maps[i];
	return n ? cand[fz_rand(w, n)] : NULL;
}

/* The writable register file mapping's registers, if there is one. */
static void *fz_regs(struct fz_w *w)
{
	unsigned int i;

	for (i = 0; i < FZ_MAPS; i++) {
		struct fz_map *m = &w->maps[i];

		if (m->used && m->kind == FZM_REGS && m->off == PTO_MMAP_REGS &&
		    m->len >= PTO_REGS_SIZE &&
		    (m->prot & (PROT_READ | PROT_WRITE)) ==
		    (PROT_READ | PROT_WRITE))
			return m->p;
	}
	return NULL;
}

/* ---- arguments ------------------------------------------------------------ */

enum { FZP_OK, FZP_EDGE, FZP_RO, FZP_NULL, FZP_BAD, FZP_UNALIGNED };

/*
 * A size for a size-first argument of @len bytes that is not its own:
 * one of a few odd ones, a field or two short, a little long (*@junk:
 * what follows is not zero), or anything up to two pages.
 */
static uint32_t fz_ioctl_size(struct fz_w *w, size_t len, bool *junk)
{
	static const uint32_t sizes[] = { 0, 4, 8, 12, 4096, 4097, 8192,
					  0xffffffff };
	uint32_t usize;

	switch (fz_rand(w, 4)) {
	case 0:
		usize = sizes[fz_rand(w, 8)];
		break;
	case 1:
		usize = (uint32_t)len - 4 * (1 + fz_rand(w, 2));
		break;
	case 2:
		usize = (uint32_t)(len + 4 + fz_rand(w, 64));
		*junk = fz_pct(w, 50);
		break;
	default:
		usize = (uint32_t)fz_rand(w, 8192);
		*junk = fz_pct(w, 30);
		break;
	}
	return usize;
}

/*
 * Mutate @arg (@len bytes, @pads as for fz_ioctl()) at random, or leave
 * it clean (w->clean): its size (*@usize, *@junk), a flag bit, a pad, a
 * byte, or where it is to lie. Returns that place (FZP_*).
 */
static int fz_ioctl_mutate(struct fz_w *w, void *arg, size_t len,
			   const unsigned short *pads, uint32_t *usize,
			   bool *junk)
{
	size_t npads = 0;

	while (pads && pads[npads])
		npads++;
	w->clean = !fz_pct(w, 30);
	if (w->clean)
		return FZP_OK;
	switch (fz_rand(w, 6)) {
	case 0:		/* the size */
		*usize = fz_ioctl_size(w, len, junk);
		break;
	case 1:		/* a flag bit */
		((uint32_t *)arg)[1] |= 1u << fz_rand(w, 32);
		break;
	case 2:		/* a pad, else a byte */
		if (npads) {
			uint32_t v = 1u << fz_rand(w, 32);

			memcpy((uint8_t *)arg + pads[fz_rand(w, npads)],
			       &v, 4);
			break;
		}
		/* fall through */
	case 3:		/* any byte after size and flags */
		((uint8_t *)arg)[8 + fz_rand(w, len - 8)] =
			(uint8_t)fz_rand(w, 256);
		break;
	default:	/* where it lies */
		return 1 + (int)fz_rand(w, 5);
	}
	return FZP_OK;
}

/* Unmap what fz_ro_map() mapped (either view may have failed). */
static void fz_ro_unmap(struct fz_w *w)
{
	if (w->ro && w->ro != MAP_FAILED)
		munmap(w->ro, PTO_PAGE);
	if (w->ro_rw && w->ro_rw != MAP_FAILED)
		munmap(w->ro_rw, PTO_PAGE);
	w->ro = w->ro_rw = NULL;
}

/*
 * The page ioctl arguments are placed on read-only: a memfd page mapped
 * twice, read-only (w->ro) and writable (w->ro_rw). 0 or -1 (errno).
 */
static int fz_ro_map(struct fz_w *w)
{
	int memfd = memfd_create("pto_fuzz_ro", MFD_CLOEXEC), err;

	if (memfd < 0)
		return -1;
	if (ftruncate(memfd, PTO_PAGE)) {
		err = errno;
		close(memfd);
		errno = err;
		return -1;
	}
	w->ro = mmap(NULL, PTO_PAGE, PROT_READ, MAP_SHARED, memfd, 0);
	w->ro_rw = mmap(NULL, PTO_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
			memfd, 0);
	close(memfd);
	if (w->ro != MAP_FAILED && w->ro_rw != MAP_FAILED)
		return 0;
	err = errno;
	fz_ro_unmap(w);
	errno = err;
	return -1;
}

/*
 * Lay @arg (@len bytes, @usize claimed, past @len zeros or junk if @junk)
 * out at @place; returns the pointer to pass the kernel.
 */
static uint8_t *fz_ioctl_place(struct fz_w *w, const void *arg, size_t len,
			       uint32_t usize, bool junk, int place)
{
	uint8_t *p = NULL;

	switch (place) {
	case FZP_OK:
	case FZP_UNALIGNED:
		p = w->scratch + (place == FZP_UNALIGNED ? 1 + fz_rand(w, 7) : 0);
		memcpy(p, arg, len);
		if (usize > len) {
			size_t tail = usize - len;

			if (tail > 2 * PTO_PAGE - len - 8)
				tail = 2 * PTO_PAGE - len - 8;
			if (junk)
				memset(p + len, 0xa5, tail);
			else
				memset(p + len, 0, tail);
		}
		break;
	case FZP_EDGE:
		p = w->scratch + 2 * PTO_PAGE - len;
		memcpy(p, arg, len);
		break;
	case FZP_RO:
		memcpy(w->ro_rw, arg, len);
		p = w->ro;
		break;
	case FZP_NULL:
		p = NULL;
		break;
	default:
		p = fz_pct(w, 50) ? w->scratch + 2 * PTO_PAGE :
				    (uint8_t *)0xffff888000000000ULL;
		break;
	}
	return p;
}

/*
 * Issue the size-first ioctl @cmd with @arg (@len bytes, built valid),
 * mutated at random: its size, a flag bit, a pad (@pads: byte offsets of
 * __u32 pads, 0-terminated), a byte, or where it lies (at the end of a
 * page before an unmapped one, read-only, NULL, unmapped, unaligned).
 * @arg keeps what was sent and gets what the kernel wrote back if that
 * can be read. w->clean: nothing was mutated.
 */
static int fz_ioctl(struct fz_w *w, int fd, unsigned long cmd, void *arg,
		    size_t len, const unsigned short *pads)
{
	uint32_t usize = (uint32_t)len;
	bool junk = false;
	int place, ret;
	uint8_t *p;

	place = fz_ioctl_mutate(w, arg, len, pads, &usize, &junk);
	memcpy(arg, &usize, 4);
	p = fz_ioctl_place(w, arg, len, usize, junk, place);
	ret = ioctl(fd, cmd, p) < 0 ? -errno : 0;
	if (place != FZP_NULL && place != FZP_BAD)
		memcpy(arg, p, len);
	/* a pointer the kernel could not use is a clean EFAULT, no more */
	if (place != FZP_OK && place != FZP_UNALIGNED && !ret &&
	    place != FZP_RO && place != FZP_EDGE)
		FZ_FAIL(w, "ioctl %#lx with a bad pointer succeeded", cmd);
	if (place == FZP_EDGE && usize > len && !ret)
		FZ_FAIL(w, "ioctl %#lx read past a page it could not read", cmd);
	return ret;
}

/* A core mask: valid mostly, with bits out of range sometimes. */
static void fz_mask(struct fz_w *w, const struct fz_file *f, __u64 *m)
{
	uint32_t nc = w->dev->info.nr_cores, naic = w->dev->info.nr_aic;
	unsigned int i, c, n;

	memset(m, 0, PTO_CORE_MASK_WORDS * sizeof(*m));
	switch (fz_rand(w, 10)) {
	case 0:
	case 1:
	case 2:
		c = (unsigned int)fz_rand(w, nc);
		m[c / 64] |= 1ULL << (c % 64);
		break;
	case 3:
		if (f) {
			for (i = 0; i < PTO_CORE_MASK_WORDS; i++)
				m[i] = f->cores[i] & pto_rng_next(w->r);
			break;
		}
		/* fall through */
	case 4:		/* a block: its AIC and its two AIV */
		c = (unsigned int)fz_rand(w, naic);
		m[c / 64] |= 1ULL << (c % 64);
		for (i = naic + 2 * c; i < naic + 2 * c + 2; i++)
			m[i / 64] |= 1ULL << (i % 64);
		break;
	case 5:
		c = (unsigned int)fz_rand(w, nc);
		n = 1 + (unsigned int)fz_rand(w, 8);
		for (i = c; i < c + n && i < nc; i++)
			m[i / 64] |= 1ULL << (i % 64);
		break;
	case 6:
		for (i = 0; i < nc; i++)
			m[i / 64] |= 1ULL << (i % 64);
		break;
	case 7:		/* empty */
		break;
	case 8:		/* a core the device lacks, with or without others */
		c = nc + (unsigned int)fz_rand(w, PTO_MAX_CORES - nc);
		m[c / 64] |= 1ULL << (c % 64);
		if (fz_pct(w, 50))
			m[0] |= 1;
		break;
	default:
		for (i = 0; i < PTO_CORE_MASK_WORDS; i++)
			m[i] = pto_rng_next(w->r) & pto_rng_next(w->r);
		break;
	}
}

static bool fz_mask_fits(struct fz_w *w, const __u64 *m)
{
	uint32_t nc = w->dev->info.nr_cores;
	unsigned int i;
	bool any = false;

	for (i = 0; i < PTO_MAX_CORES; i++) {
		if (!(m[i / 64] >> (i % 64) & 1))
			continue;
		if (i >= nc)
			return false;
		any = true;
	}
	return any;
}

/* A core id: attached by @f mostly, else any, sometimes out of range. */
static uint32_t fz_core(struct fz_w *w, const struct fz_file *f)
{
	uint32_t nc = w->dev->info.nr_cores, i, start;

	if (f && fz_pct(w, 70)) {
		start = (uint32_t)fz_rand(w, nc);
		for (i = 0; i < nc; i++) {
			uint32_t c = (start + i) % nc;

			if (f->cores[c / 64] >> (c % 64) & 1)
				return c;
		}
	}
	if (fz_pct(w, 10))
		return fz_pct(w, 50) ? nc + (uint32_t)fz_rand(w, 300) :
				       (uint32_t)pto_rng_next(w->r);
	return (uint32_t)fz_rand(w, nc);
}

/*
 * A wait deadline: mostly a few ms ahead, sometimes passed, negative, or
 * none / far with the interval timer armed to interrupt the wait (*arm).
 */
static __s64 fz_deadline(struct fz_w *w, bool *arm)
{
	*arm = false;
	switch (fz_rand(w, 10)) {
	case 0:
		return 1;		/* long passed */
	case 1:
		return -(__s64)fz_rand(w, 1000000);
	case 2:
		*arm = true;
		return 0;		/* none */
	case 3:
		*arm = true;
		return pto_now_ns() + 1000000000LL;
	default:
		return pto_now_ns() + (__s64)fz_rand(w, 2000000);
	}
}

static void fz_alarm(int sig)
{
	(void)sig;
}

enum fz_timer_mode {
	FZ_TIMER_OFF,
	FZ_TIMER_FAST,	/* the wait may not end by itself: SIGALRM each ms */
	FZ_TIMER_GUARD,	/* it should end by its deadline (at most 1 s
			 * ahead), but the mutation of its argument may have
			 * moved it: SIGALRM after 2 s, then every 10 ms. A
			 * wait that ends as it should is never interrupted
			 * (same_seed_same_run compares their results), even
			 * late under TCG. */
};

/* The interval timer whose SIGALRM interrupts a wait (no SA_RESTART). */
static void fz_timer(enum fz_timer_mode mode)
{
	static const struct itimerval it[] = {
		[FZ_TIMER_OFF] = { { 0, 0 }, { 0, 0 } },
		[FZ_TIMER_FAST] = { { 0, 1000 }, { 0, 1500 } },
		[FZ_TIMER_GUARD] = { { 0, 10000 }, { 2, 0 } },
	};

	setitimer(ITIMER_REAL, &it[mode], NULL);
}

/* The timer for a wait whose deadline fz_deadline() chose. */
static enum fz_timer_mode fz_wait_timer(bool arm)
{
	return arm ? FZ_TIMER_FAST : FZ_TIMER_GUARD;
}

/* ---- operations ----------------------------------------------------------------- */

static int fz_open(struct fz_w *w)
{
	static const int modes[] = { O_RDWR, O_RDWR, O_RDWR, O_RDWR, O_RDWR,
				     O_RDWR, O_RDWR, O_RDONLY, O_WRONLY };
	struct fz_file *f = NULL;
	unsigned int i;
	int flags, fd;

	for (i = 0; i < FZ_FILES && !f; i++)
		if (!fz_file_open(&w->files[i]))
			f = &w->files[i];
	if (!f)
		return FZ_SKIP;
	flags = modes[fz_rand(w, 9)] | O_CLOEXEC |
		(fz_pct(w, 20) ? O_NONBLOCK : 0);
	fz_note(w, (uint64_t)flags, 0, 0, 0);
	fd = open(pto_dev_path(), flags);
	if (fd < 0)
		return -errno;
	memset(f, 0, sizeof(*f));
	f->fd[0] = fd;
	f->fd[1] = -1;
	f->id = ++w->next_id;
	f->rdonly = (flags & O_ACCMODE) == O_RDONLY;
	return 0;
}

static int fz_close(struct fz_w *w)
{
	/* the AICPU role is one per device: let it go round */
	struct fz_file *f = fz_pick_file(w, PTO_ROLE_AICPU, 30, false);
	int k, ret;

	if (!f)
		return FZ_SKIP;
	k = f->fd[0] >= 0 && (f->fd[1] < 0 || fz_pct(w, 50)) ? 0 : 1;
	fz_note(w, (uint64_t)f->fd[k], f->role, 0, 0);
	ret = close(f->fd[k]) ? -errno : 0;
	f->fd[k] = -1;
	if (!fz_file_open(f) && !f->inherited)
		fz_file_gone(w, f);
	else if (!fz_file_open(f))
		f->id = 0;	/* the worker still has it */
	return ret;
}

static int fz_dup(struct fz_w *w)
{
	struct fz_file *f = fz_pick_file(w, -1, 0, false);
	int fd;

	if (!f || (f->fd[0] >= 0 && f->fd[1] >= 0))
		return FZ_SKIP;
	fd = fcntl(f->fd[0] >= 0 ? f->fd[0] : f->fd[1], F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	f->fd[f->fd[0] >= 0 ? 1 : 0] = fd;
	return 0;
}

/* The whole register file, read-write, as ptod and pto-aicore map it. */
/*
 * Map the registers writable as @f's role may: all of them for the
 * AICPU, from PTO_REGS_EXEC_WRITE_OFFSET on (status, cores) for an
 * executor.
 */
static void fz_map_regs(struct fz_w *w, struct fz_file *f)
{
	struct fz_map *m = fz_new_map(w);
	uint64_t off = PTO_MMAP_REGS;
	size_t len = FZ_REGS_PAGES * PTO_PAGE;
	int err;
	void *p;

	if (!m)
		return;
	if (f->role == PTO_ROLE_EXECUTOR) {
		off += PTO_REGS_EXEC_WRITE_OFFSET;
		len -= PTO_REGS_EXEC_WRITE_OFFSET;
	}
	p = pto_mmap(fz_fd(w, f), len, off, PROT_READ | PROT_WRITE,
		     MAP_SHARED, &err);
	if (!p) {
		if (!fz_denied(err) && err != -ENOMEM)
			FZ_FAIL(w, "mmap of the registers by role %u: %d",
				f->role, err);
		return;
	}
	*m = (struct fz_map){ .p = p, .len = len, .off = off,
			      .prot = PROT_READ | PROT_WRITE,
			      .kind = FZM_REGS, .used = true,
			      .exec_regs = f->role == PTO_ROLE_EXECUTOR };
}

static int fz_set_role(struct fz_w *w)
{
	static const unsigned short pads[] = { 12, 0 };
	static const unsigned int roles[] = { PTO_ROLE_CLIENT, PTO_ROLE_CLIENT,
					      PTO_ROLE_CLIENT, PTO_ROLE_CLIENT,
					      PTO_ROLE_EXECUTOR,
					      PTO_ROLE_EXECUTOR,
					      PTO_ROLE_EXECUTOR,
					      PTO_ROLE_AICPU, PTO_ROLE_AICPU,
					      PTO_ROLE_NONE, 4 };
	struct fz_file *f = fz_pick_file(w, PTO_ROLE_NONE, 85, true);
	struct pto_set_role s = { .size = sizeof(s) };
	bool had;
	int ret;

	if (!f)
		return FZ_SKIP;
	s.role = fz_pct(w, 5) ? (uint32_t)pto_rng_next(w->r) :
				roles[fz_rand(w, 11)];
	had = f->role != PTO_ROLE_NONE;
	fz_note(w, (uint64_t)f->fd[0], s.role, had, 0);
	ret = fz_ioctl(w, fz_fd(w, f), PTO_IOC_SET_ROLE, &s, sizeof(s), pads);
	fz_errno_rdonly_ok(w, f, "SET_ROLE", ret);
	if (!ret) {
		if (f->rdonly)
			FZ_FAIL(w, "SET_ROLE %u on a file opened read-only succeeded",
				s.role);
		if (had)
			FZ_FAIL(w, "SET_ROLE %u on a file of role %u succeeded",
				s.role, f->role);
		if (s.role < PTO_ROLE_CLIENT || s.role > PTO_ROLE_EXECUTOR)
			FZ_FAIL(w, "SET_ROLE %u succeeded", s.role);
		if (w->nobody && s.role != PTO_ROLE_CLIENT)
			FZ_FAIL(w, "SET_ROLE %u succeeded as nobody", s.role);
		f->role = s.role;
		if ((s.role == PTO_ROLE_AICPU || s.role == PTO_ROLE_EXECUTOR) &&
		    !f->rdonly && fz_pct(w, 60))
			fz_map_regs(w, f);
	}
	fz_checked(w);
	return ret;
}

static int fz_abi_version(struct fz_w *w)
{
	struct fz_file *f = fz_pick_file(w, -1, 0, false);
	__u32 v = 0;
	void *p;
	int ret;

	if (!f)
		return FZ_SKIP;
	switch (fz_rand(w, 8)) {
	case 0:
		p = NULL;
		break;
	case 1:
		p = w->ro;
		break;
	case 2:
		p = w->scratch + 2 * PTO_PAGE;
		break;
	default:
		p = &v;
		break;
	}
	ret = ioctl(fz_fd(w, f), PTO_IOC_ABI_VERSION, p) < 0 ? -errno : 0;
	fz_errno_ok(w, "ABI_VERSION", ret);
	if (p == &v && (ret || v != PTO_ABI_VERSION))
		FZ_FAIL(w, "ABI_VERSION: %d, %#x", ret, v);
	else if (p != &v && !ret)
		FZ_FAIL(w, "ABI_VERSION into an unwritable pointer succeeded");
	fz_checked(w);
	return ret;
}

/* @cmd with @arg on any file, errno checked; FZ_SKIP without a file. */
static int fz_any_ioctl(struct fz_w *w, const char *name, unsigned long cmd,
			void *arg, size_t len)
{
	struct fz_file *f = fz_pick_file(w, -1, 0, false);
	int ret;

	if (!f)
		return FZ_SKIP;
	ret = fz_ioctl(w, fz_fd(w, f), cmd, arg, len, NULL);
	/* HWS_CONFIG: its argument may come out of fz_ioctl() with SET */
	if (cmd == PTO_IOC_HWS_CONFIG)
		fz_errno_rdonly_ok(w, f, name, ret);
	else
		fz_errno_ok(w, name, ret);
	return ret;
}

static int fz_get_info(struct fz_w *w)
{
	struct pto_info i = { .size = sizeof(i) };
	int ret;

	ret = fz_any_ioctl(w, "GET_INFO", PTO_IOC_GET_INFO, &i, sizeof(i));
	if (ret == FZ_SKIP)
		return ret;
	if (!ret && w->clean &&
	    (i.nr_cores != w->dev->info.nr_cores ||
	     i.gm_size != w->dev->info.gm_size || i.gm_free > i.gm_size ||
	     i.gm_free % PTO_PAGE || i.abi_version != PTO_ABI_VERSION))
		FZ_FAIL(w, "GET_INFO: nr_cores %u gm_size %llu gm_free %llu abi %#x",
			i.nr_cores, (unsigned long long)i.gm_size,
			(unsigned long long)i.gm_free, i.abi_version);
	fz_checked(w);
	return ret;
}

/* A fresh buffer reads zero (GM is zeroed at allocation). */
static void fz_zero_check(struct fz_w *w, struct fz_file *f,
			  const struct fz_buf *b)
{
	size_t len = b->len < 64 * PTO_PAGE ? b->len : 64 * PTO_PAGE;
	const volatile uint64_t *q;
	int err;
	size_t i;

	if (f->role != PTO_ROLE_CLIENT && f->role != PTO_ROLE_AICPU)
		return;
	q = pto_mmap(fz_fd(w, f), len, b->off, PROT_READ, MAP_SHARED, &err);
	if (!q) {
		if (!fz_denied(err) && err != -ENOMEM)
			FZ_FAIL(w, "mmap of a new buffer (handle %u, %llu bytes at %#llx, role %u): %d",
				b->handle, (unsigned long long)b->len,
				(unsigned long long)b->dev, f->role, err);
		return;
	}
	for (i = 0; i < 3; i++) {
		size_t at = i == 0 ? 0 : i == 1 ? len / 8 - 1 :
			    fz_rand(w, len / 8);

		if (q[at]) {
			FZ_FAIL(w, "new buffer %#llx (%llu bytes) is not zero at +%zu: %#llx",
				(unsigned long long)b->dev,
				(unsigned long long)b->len, at * 8,
				(unsigned long long)q[at]);
			break;
		}
	}
	fz_checked(w);
	munmap((void *)q, len);
}

static uint64_t fz_alloc_len(struct fz_w *w)
{
	uint64_t gm = w->dev->info.gm_size;

	switch (fz_rand(w, 40)) {
	case 0:
		return 0;
	case 1:
		return gm + 1 + fz_rand(w, 3 * PTO_PAGE);
	case 2:
		return ~0ULL - fz_rand(w, 2);
	case 3:
		return 1ULL << (32 + fz_rand(w, 32));
	case 4:
		return (1 + fz_rand(w, 16)) << 20;
	case 5:
		return fz_pct(w, 10) ? gm : 1 + fz_rand(w, 16);
	case 6:
	case 7:
	case 8:
	case 9:
	case 10:
	case 11:
		return (1 + fz_rand(w, 64)) * PTO_PAGE;
	default:
		return 1 + fz_rand(w, 16 * PTO_PAGE);
	}
}

static int fz_gm_alloc(struct fz_w *w)
{
	static const unsigned short pads[] = { 28, 0 };
	struct fz_file *f = fz_pick_file(w, fz_pct(w, 50) ? PTO_ROLE_CLIENT :
					 PTO_ROLE_AICPU, 85, false);
	struct pto_gm_alloc a = { .size = sizeof(a) };
	uint64_t gm0 = PTO_GM_DEV_BASE, gm = w->dev->info.gm_size;
	struct fz_buf *b;
	int ret;

	if (!f || fz_live_bufs(w) >= FZ_BUFS - 8)
		return FZ_SKIP;
	a.len = fz_alloc_len(w);
	switch (fz_rand(w, 10)) {
	case 0:
	case 1:
		a.align = PTO_PAGE << fz_rand(w, 19);	/* up to 1 GiB */
		break;
	case 2:
		a.align = fz_pct(w, 50) ? PTO_PAGE << (19 + fz_rand(w, 4)) :
					  pto_rng_next(w->r) >> fz_rand(w, 64);
		break;
	default:
		a.align = 0;
		break;
	}
	fz_note(w, (uint64_t)f->fd[0], a.len, a.align, f->role);
	ret = fz_ioctl(w, fz_fd(w, f), PTO_IOC_GM_ALLOC, &a, sizeof(a), pads);
	fz_errno_ok(w, "GM_ALLOC", ret);
	if (ret || f->inherited)
		return ret;
	/* what the kernel wrote back is in a (unless it had a bad pointer) */
	if (!a.handle || (a.uid && !(a.flags & PTO_GM_ALLOC_CHARGE)) ||
	    a.dev_addr < gm0 ||
	    a.dev_addr + PAGE_ALIGN_UP(a.len) > gm0 + gm ||
	    a.dev_addr % PTO_PAGE || (a.align && a.dev_addr % a.align) ||
	    a.mmap_offset != PTO_MMAP_GM + (a.dev_addr - gm0) || !a.len ||
	    a.len > gm) {
		FZ_FAIL(w, "GM_ALLOC len %llu align %llu: handle %u dev %#llx off %#llx uid %u",
			(unsigned long long)a.len, (unsigned long long)a.align,
			a.handle, (unsigned long long)a.dev_addr,
			(unsigned long long)a.mmap_offset, a.uid);
		return ret;
	}
	fz_checked(w);
	b = fz_new_buf(w);
	if (!b)
		return ret;
	*b = (struct fz_buf){ .fid = f->id, .handle = a.handle,
			      .dev = a.dev_addr, .len = PAGE_ALIGN_UP(a.len),
			      .off = a.mmap_offset, .live = true, .used = true };
	if (fz_pct(w, 30))
		fz_zero_check(w, f, b);
	return ret;
}

static int fz_gm_free(struct fz_w *w)
{
	static const unsigned short pads[] = { 12, 0 };
	struct fz_file *f = fz_pick_file(w, PTO_ROLE_CLIENT, 60, true);
	struct pto_gm_free s = { .size = sizeof(s) };
	struct fz_buf *b = NULL, *mine = NULL;
	unsigned int i;
	int ret;

	if (!f)
		return FZ_SKIP;
	switch (fz_rand(w, 10)) {
	case 0:
		s.handle = 0;
		break;
	case 1:
		s.handle = (uint32_t)pto_rng_next(w->r) >> fz_rand(w, 32);
		break;
	case 2:
	case 3:
		b = fz_pick_buf(w, 0, fz_pct(w, 50));	/* any file's */
		break;
	default:
		b = fz_pick_buf(w, f->id, true);
		break;
	}
	if (b)
		s.handle = b->handle;
	fz_note(w, (uint64_t)f->fd[0], s.handle, 0, 0);
	ret = fz_ioctl(w, fz_fd(w, f), PTO_IOC_GM_FREE, &s, sizeof(s), pads);
	fz_errno_ok(w, "GM_FREE", ret);
	for (i = 0; i < FZ_BUFS; i++)
		if (w->bufs[i].used && w->bufs[i].live &&
		    w->bufs[i].fid == f->id && w->bufs[i].handle == s.handle)
			mine = &w->bufs[i];
	if (!ret && mine)
		mine->live = false;
	if (ret && mine && w->clean && !fz_denied(ret))
		FZ_FAIL(w, "GM_FREE of live handle %u of this file: %d",
			s.handle, ret);
	fz_checked(w);
	return ret;
}

static int fz_gm_lookup(struct fz_w *w)
{
	static const unsigned short pads[] = { 28, 0 };
	struct fz_file *f = fz_pick_file(w, PTO_ROLE_CLIENT, 50, false);
	struct pto_gm_lookup l = { .size = sizeof(l) };
	struct fz_buf *b;
	uint64_t gm0 = PTO_GM_DEV_BASE;
	int ret;

	if (!f)
		return FZ_SKIP;
	b = fz_pick_buf(w, fz_pct(w, 60) ? f->id : 0, !fz_pct(w, 20));
	if (b && fz_pct(w, 75)) {
		int64_t off = fz_pct(w, 50) ? 0 : (int64_t)fz_rand(w, b->len + 2 * PTO_PAGE) -
						(int64_t)PTO_PAGE;

		l.dev_addr = b->dev + (uint64_t)off;
		l.len = fz_pct(w, 40) ? b->len : 1 + fz_rand(w, b->len + PTO_PAGE);
	} else {
		switch (fz_rand(w, 4)) {
		case 0:
			l.dev_addr = gm0 + fz_rand(w, w->dev->info.gm_size);
			break;
		case 1:
			l.dev_addr = ~0ULL - fz_rand(w, PTO_PAGE);
			break;
		case 2:
			l.dev_addr = fz_rand(w, gm0);
			break;
		default:
			l.dev_addr = pto_rng_next(w->r);
			break;
		}
		l.len = fz_pct(w, 10) ? 0 : fz_pct(w, 10) ? ~0ULL :
		       1 + fz_rand(w, 4 * PTO_PAGE);
	}
	fz_note(w, (uint64_t)f->fd[0], l.dev_addr, l.len, 0);
	ret = fz_ioctl(w, fz_fd(w, f), PTO_IOC_GM_LOOKUP, &l, sizeof(l), pads);
	fz_errno_ok(w, "GM_LOOKUP", ret);
	if (b && b->live && b->fid == f->id && w->clean && !f->inherited &&
	    l.len && l.dev_addr >= b->dev &&
	    l.dev_addr + l.len <= b->dev + b->len && l.dev_addr + l.len > l.dev_addr) {
		if (ret || l.handle != b->handle || l.buf_dev_addr != b->dev ||
		    l.buf_len != b->len)
			FZ_FAIL(w, "GM_LOOKUP %#llx+%llu in live buffer %u (%#llx+%llu): %d, handle %u %#llx+%llu",
				(unsigned long long)l.dev_addr,
				(unsigned long long)l.len, b->handle,
				(unsigned long long)b->dev,
				(unsigned long long)b->len, ret, l.handle,
				(unsigned long long)l.buf_dev_addr,
				(unsigned long long)l.buf_len);
		fz_checked(w);
	}
	return ret;
}

/* ---- pins ------------------------------------------------------------------------ */

/*
 * The descriptor GM_PIN names: mostly a client file of this process,
 * else any file of the device (the wrong role), a descriptor that is no
 * file of the device, or none.
 */
static int fz_pin_fd(struct fz_w *w, struct fz_file **cf)
{
	*cf = NULL;
	switch (fz_rand(w, 10)) {
	case 0:
		return fz_pct(w, 50) ? -1 : (int)(pto_rng_next(w->r) >> 33);
	case 1:
		return (int)fz_rand(w, 3);	/* stdin, stdout, stderr */
	case 2:
		*cf = fz_pick_file(w, -1, 0, false);
		break;
	default:
		*cf = fz_pick_file(w, PTO_ROLE_CLIENT, 90, false);
		break;
	}
	return *cf ? fz_fd(w, *cf) : -1;
}

/* A range in @b mostly, else around it or anywhere. */
static void fz_pin_range(struct fz_w *w, const struct fz_buf *b,
			 struct pto_gm_pin *p)
{
	if (b && fz_pct(w, 80)) {
		uint64_t off = fz_rand(w, b->len);

		p->dev_addr = b->dev + off;
		p->len = fz_pct(w, 80) ? 1 + fz_rand(w, b->len - off) :
					 fz_rand(w, b->len + PTO_PAGE);
		return;
	}
	p->dev_addr = fz_pct(w, 50) ? PTO_GM_DEV_BASE +
				      fz_rand(w, w->dev->info.gm_size) :
				      pto_rng_next(w->r);
	p->len = fz_pct(w, 10) ? ~0ULL : fz_rand(w, 4 * PTO_PAGE);
}

static bool fz_pin_expected(const struct fz_file *cf, const struct fz_buf *b,
			    const struct pto_gm_pin *p)
{
	return cf && b && b->live && b->fid == cf->id && !cf->inherited &&
	       cf->role == PTO_ROLE_CLIENT && p->len &&
	       p->dev_addr >= b->dev && p->dev_addr + p->len > p->dev_addr &&
	       p->dev_addr + p->len <= b->dev + b->len;
}

static struct fz_pin *fz_new_pin(struct fz_w *w)
{
	unsigned int i;

	for (i = 0; i < FZ_PINS; i++)
		if (!w->pins[i].fid)
			return &w->pins[i];
	return NULL;
}

static int fz_gm_pin(struct fz_w *w)
{
	static const unsigned short pads[] = { 0 };
	struct fz_file *f = fz_pick_role(w, PTO_ROLE_AICPU, true), *cf;
	struct pto_gm_pin p = { .size = sizeof(p) };
	struct fz_pin *slot = fz_new_pin(w);
	struct fz_buf *b;
	int ret;

	if (!f || !slot)
		return FZ_SKIP;
	p.fd = fz_pin_fd(w, &cf);
	b = fz_pick_buf(w, cf && fz_pct(w, 80) ? cf->id : 0, !fz_pct(w, 15));
	fz_pin_range(w, b, &p);
	fz_note(w, (uint64_t)f->fd[0], (uint64_t)p.fd, p.dev_addr, p.len);
	ret = fz_ioctl(w, fz_fd(w, f), PTO_IOC_GM_PIN, &p, sizeof(p), pads);
	if (ret != -EBADF && ret != -EXDEV)
		fz_errno_ok(w, "GM_PIN", ret);
	if (!ret && f->role == PTO_ROLE_AICPU)
		*slot = (struct fz_pin){ .fid = f->id, .id = p.pin };
	if (!w->clean || f->role != PTO_ROLE_AICPU || !fz_pin_expected(cf, b, &p))
		return ret;
	if (ret || !p.pin || p.buf_dev_addr != b->dev || p.buf_len != b->len)
		FZ_FAIL(w, "GM_PIN %#llx+%llu in live buffer %u (%#llx+%llu) of client file %u: %d, pin %u %#llx+%llu",
			(unsigned long long)p.dev_addr,
			(unsigned long long)p.len, b->handle,
			(unsigned long long)b->dev,
			(unsigned long long)b->len, cf->id, ret, p.pin,
			(unsigned long long)p.buf_dev_addr,
			(unsigned long long)p.buf_len);
	fz_checked(w);
	return ret;
}

static int fz_gm_unpin(struct fz_w *w)
{
	static const unsigned short pads[] = { 12, 0 };
	struct fz_file *f = fz_pick_role(w, PTO_ROLE_AICPU, true);
	struct pto_gm_unpin u = { .size = sizeof(u) };
	struct fz_pin *mine = NULL;
	unsigned int i;
	int ret;

	if (!f)
		return FZ_SKIP;
	for (i = 0; i < FZ_PINS; i++)
		if (w->pins[i].fid == f->id && (!mine || fz_pct(w, 50)))
			mine = &w->pins[i];
	if (mine && fz_pct(w, 85))
		u.pin = mine->id;
	else
		u.pin = fz_pct(w, 30) ? 0 : (uint32_t)fz_rand(w, 1000);
	fz_note(w, (uint64_t)f->fd[0], u.pin, 0, 0);
	ret = fz_ioctl(w, fz_fd(w, f), PTO_IOC_GM_UNPIN, &u, sizeof(u), pads);
	fz_errno_ok(w, "GM_UNPIN", ret);
	mine = NULL;
	for (i = 0; i < FZ_PINS; i++)
		if (w->pins[i].fid == f->id && w->pins[i].id == u.pin)
			mine = &w->pins[i];
	if (!ret && mine)
		mine->fid = 0;
	if (ret && mine && w->clean && !fz_denied(ret))
		FZ_FAIL(w, "GM_UNPIN of live pin %u of this file: %d", u.pin,
			ret);
	fz_checked(w);
	return ret;
}

static int fz_cores(struct fz_w *w, unsigned int op)
{
	static const unsigned long cmds[] = {
		[FZ_CORE_ATTACH] = PTO_IOC_CORE_ATTACH,
		[FZ_CORE_DETACH] = PTO_IOC_CORE_DETACH,
		[FZ_KICK] = PTO_IOC_KICK,
	};
	int role = op == FZ_KICK ? PTO_ROLE_AICPU : PTO_ROLE_EXECUTOR;
	struct fz_file *f = fz_pick_role(w, role, op != FZ_KICK);
	struct pto_cores c = { .size = sizeof(c) };
	bool fits, mine = true;
	unsigned int i;
	int ret;

	if (!f)
		return FZ_SKIP;
	if (op == FZ_CORE_DETACH && fz_pct(w, 50)) {
		for (i = 0; i < PTO_CORE_MASK_WORDS; i++)
			c.mask[i] = f->cores[i] & (fz_pct(w, 50) ? ~0ULL :
						   pto_rng_next(w->r));
	} else {
		fz_mask(w, op == FZ_CORE_DETACH || fz_pct(w, 30) ? f : NULL,
			c.mask);
	}
	fz_note(w, (uint64_t)f->fd[0], c.mask[0], c.mask[1], f->role);
	ret = fz_ioctl(w, fz_fd(w, f), cmds[op], &c, sizeof(c), NULL);
	fz_errno_ok(w, fz_names[op], ret);
	fits = fz_mask_fits(w, c.mask);
	for (i = 0; i < PTO_CORE_MASK_WORDS; i++)
		if (c.mask[i] & ~f->cores[i])
			mine = false;
	if (!ret && !fits)
		FZ_FAIL(w, "%s of mask %#llx %#llx %#llx %#llx succeeded",
			fz_names[op], (unsigned long long)c.mask[0],
			(unsigned long long)c.mask[1],
			(unsigned long long)c.mask[2],
			(unsigned long long)c.mask[3]);
	if (op == FZ_CORE_DETACH && w->clean && fits && (int)f->role == role &&
	    !fz_denied(ret) && (ret == 0) != mine)
		FZ_FAIL(w, "CORE_DETACH of %s cores: %d", mine ? "its own" :
			"not only its own", ret);
	fz_checked(w);
	if (ret)
		return ret;
	for (i = 0; i < PTO_CORE_MASK_WORDS; i++) {
		if (op == FZ_CORE_ATTACH)
			f->cores[i] |= c.mask[i];
		else if (op == FZ_CORE_DETACH)
			f->cores[i] &= ~c.mask[i];
	}
	return ret;
}

static int fz_attach(struct fz_w *w)
{
	return fz_cores(w, FZ_CORE_ATTACH);
}

static int fz_detach(struct fz_w *w)
{
	return fz_cores(w, FZ_CORE_DETACH);
}

static int fz_kick(struct fz_w *w)
{
	return fz_cores(w, FZ_KICK);
}

/*
 * A waiting ioctl of @f, ended by a timer's signal if @arm (a wait with
 * no or a long deadline): its result, checked against the errnos allowed.
 */
static int fz_wait_ioctl(struct fz_w *w, struct fz_file *f, unsigned long cmd,
			 void *arg, size_t len, const unsigned short *pads,
			 bool arm, const char *what)
{
	int ret;

	fz_timer(fz_wait_timer(arm));
	ret = fz_ioctl(w, fz_fd(w, f), cmd, arg, len, pads);
	fz_timer(FZ_TIMER_OFF);
	fz_errno_ok(w, what, ret);
	return ret;
}

static int fz_core_wait(struct fz_w *w)
{
	struct fz_file *f = fz_pick_role(w, PTO_ROLE_EXECUTOR, false);
	struct pto_core_wait cw = { .size = sizeof(cw) };
	void *regs = fz_regs(w);
	bool arm;
	int ret;

	if (!f)
		return FZ_SKIP;
	cw.core = fz_core(w, f);
	cw.timeout_ns = fz_deadline(w, &arm);
	if (regs && cw.core < w->dev->info.nr_cores) {
		volatile struct pto_core_regs *cr = pto_core(regs, cw.core);

		if (fz_pct(w, 50)) {
			PTO_STORE(cr->parked, 1);
			PTO_FENCE();
		}
		cw.last_dmb = fz_pct(w, 80) ? PTO_LOAD(cr->data_main_base) :
					      (uint32_t)pto_rng_next(w->r);
	} else {
		cw.last_dmb = fz_pct(w, 50) ? 0 : (uint32_t)pto_rng_next(w->r);
	}
	fz_note(w, (uint64_t)f->fd[0], cw.core, cw.last_dmb,
		(uint64_t)cw.timeout_ns);
	ret = fz_wait_ioctl(w, f, PTO_IOC_CORE_WAIT, &cw, sizeof(cw), NULL,
			    arm, "CORE_WAIT");
	if (!ret && w->clean && cw.reason != PTO_WAKE_DMB &&
	    cw.reason != PTO_WAKE_KICK)
		FZ_FAIL(w, "CORE_WAIT returned 0 with reason %u", cw.reason);
	fz_checked(w);
	return ret;
}

/*
 * CORE_WAIT_ANY on a set (mostly of the file's own cores), parked as the
 * protocol wants or not: a call that returns 0 returns a core of its set.
 */
static int fz_core_wait_any(struct fz_w *w)
{
	struct fz_file *f = fz_pick_role(w, PTO_ROLE_EXECUTOR, false);
	struct pto_core_wait_any cw = { .size = sizeof(cw) };
	uint32_t nc = w->dev->info.nr_cores;
	void *regs = fz_regs(w);
	unsigned int c;
	bool arm;
	int ret;

	if (!f)
		return FZ_SKIP;
	if (fz_pct(w, 60)) {	/* its own cores, all or some */
		for (c = 0; c < PTO_CORE_MASK_WORDS; c++)
			cw.mask[c] = f->cores[c] & (fz_pct(w, 50) ? ~0ULL :
						    pto_rng_next(w->r));
	} else {
		fz_mask(w, f, cw.mask);
	}
	cw.timeout_ns = fz_deadline(w, &arm);
	if (regs && fz_pct(w, 70)) {
		for (c = 0; c < nc && c < PTO_CORE_MASK_WORDS * 64; c++)
			if (cw.mask[c / 64] & (1ULL << (c % 64)))
				PTO_STORE(pto_core(regs, c)->parked, 1);
		PTO_FENCE();
	}
	fz_note(w, (uint64_t)f->fd[0], cw.mask[0], cw.mask[1],
		(uint64_t)cw.timeout_ns);
	ret = fz_wait_ioctl(w, f, PTO_IOC_CORE_WAIT_ANY, &cw, sizeof(cw),
			    NULL, arm, "CORE_WAIT_ANY");
	if (!ret && w->clean && (cw.core >= nc ||
				 !(cw.mask[cw.core / 64] & (1ULL << (cw.core % 64)))))
		FZ_FAIL(w, "CORE_WAIT_ANY returned core %u, not of its set",
			cw.core);
	fz_checked(w);
	return ret;
}

static int fz_raise_irq(struct fz_w *w)
{
	static const unsigned short pads[] = { 12, 0 };
	/* executors for their cores, the AICPU for itself (no core) */
	bool aicpu = fz_pct(w, 30);
	struct fz_file *f = fz_pick_role(w, aicpu ? PTO_ROLE_AICPU :
					 PTO_ROLE_EXECUTOR, false);
	struct pto_raise_irq s = { .size = sizeof(s) };
	int ret;

	if (!f)
		return FZ_SKIP;
	s.core = fz_pct(w, aicpu ? 80 : 5) ? PTO_CORE_NONE : fz_core(w, f);
	fz_note(w, (uint64_t)f->fd[0], s.core, 0, 0);
	ret = fz_ioctl(w, fz_fd(w, f), PTO_IOC_RAISE_IRQ, &s, sizeof(s), pads);
	fz_errno_ok(w, "RAISE_IRQ", ret);
	return ret;
}

static int fz_irq_wait(struct fz_w *w)
{
	static const unsigned short pads[] = { 12, 0 };
	struct fz_file *f = fz_pick_role(w, PTO_ROLE_AICPU, false);
	struct pto_irq_wait s = { .size = sizeof(s) };
	void *regs = fz_regs(w);
	bool arm;

	if (!f)
		return FZ_SKIP;
	/* the current count (a wait), or one far from it (no wait) */
	s.count = regs && fz_pct(w, 70) ? PTO_LOAD(pto_regs_info(regs)->irq_count) :
					  0x80000000U + (uint32_t)fz_rand(w, 4);
	s.timeout_ns = fz_deadline(w, &arm);
	fz_note(w, (uint64_t)f->fd[0], s.count, (uint64_t)s.timeout_ns, 0);
	return fz_wait_ioctl(w, f, PTO_IOC_IRQ_WAIT, &s, sizeof(s), pads, arm,
			     "IRQ_WAIT");
}

static int fz_hws_get(struct fz_w *w)
{
	struct pto_hws_config h = { .size = sizeof(h) };
	int ret;

	ret = fz_any_ioctl(w, "HWS_CONFIG", PTO_IOC_HWS_CONFIG, &h, sizeof(h));
	if (ret == FZ_SKIP)
		return ret;
	/* only validated configurations are ever written (never by mmap here) */
	if (!ret && w->clean && !(h.flags & PTO_HWS_CONFIG_SET) &&
	    (h.cfg.cluster_sip_num != 3 || h.cfg.second_rsc_sch ||
	     !h.cfg.promote_threshold || h.cfg.promote_threshold > 255 ||
	     h.cfg.policy > PTO_HWS_POLICY_PTO2 || h.cfg.pad[0] ||
	     h.cfg.pad[1]))
		FZ_FAIL(w, "HWS_CONFIG read an invalid configuration (policy %u cluster %u threshold %u)",
			h.cfg.policy, h.cfg.cluster_sip_num,
			h.cfg.promote_threshold);
	fz_checked(w);
	return ret;
}

/* Change a field of @c to a value in or out of its range. */
static void fz_hws_mutate(struct fz_w *w, struct pto_hws_cfg *c)
{
	uint32_t nc = w->dev->info.nr_cores;
	uint32_t v = (uint32_t)fz_rand(w, 4);

	switch (fz_rand(w, 16)) {
	case 0: c->policy = v; break;
	case 1: c->work_mode = v; break;
	case 2: c->cluster_sip_num = fz_pct(w, 50) ? 3 : v * 2; break;
	case 3: c->second_rsc_sch = v & 1; break;
	case 4: c->early_launch_en = v; break;
	case 5: c->early_launch_mode = v; break;
	case 6: c->backfill_margin = (uint32_t)pto_rng_next(w->r); break;
	case 7: c->fillup_first = v; c->rsvd_first = v & 1; break;
	case 8: c->promote_rule = (uint32_t)fz_rand(w, 0x20); break;
	case 9: c->promote_threshold = (uint32_t)fz_rand(w, 300); break;
	case 10: c->report_en = v; break;
	case 11:
		c->launch_delay = (uint32_t)fz_rand(w, 1100000000);
		c->pre_idle_offset = (uint32_t)fz_rand(w, 1100000000);
		break;
	case 12: c->pad[v & 1] = v; break;
	case 13:
		c->scale_ratio[fz_rand(w, PTO_HWS_SCALE_RANKS)] =
			(uint32_t)fz_rand(w, 2 * PTO_HWS_SCALE_MAX);
		break;
	default: {
		__u64 *m = c->usage_mask[fz_rand(w, PTO_HWS_NR_CTX)]
					   [fz_rand(w, PTO_HWS_USAGE_CLASSES)];
		uint32_t i = fz_pct(w, 70) ? (uint32_t)fz_rand(w, nc) :
					     nc + (uint32_t)fz_rand(w, PTO_MAX_CORES - nc);

		m[i / 64] ^= 1ULL << (i % 64);
		break;
	}
	}
}

static int fz_hws_set(struct fz_w *w)
{
	struct fz_file *f = fz_pick_file(w, PTO_ROLE_AICPU, 60, false);
	struct pto_hws_config h = { .size = sizeof(h),
				    .flags = PTO_HWS_CONFIG_SET };
	unsigned int i, n = (unsigned int)fz_rand(w, 3);
	int ret;

	if (!f)
		return FZ_SKIP;
	if (fz_pct(w, 30) || pto_hws_get(fz_fd(w, f), &h.cfg))
		h.cfg = w->dev->orig;
	for (i = 0; i < n; i++)
		fz_hws_mutate(w, &h.cfg);
	if (fz_pct(w, 5))
		h.flags |= 1u << (1 + fz_rand(w, 31));
	fz_note(w, (uint64_t)f->fd[0], h.flags, n, f->role);
	ret = fz_ioctl(w, fz_fd(w, f), PTO_IOC_HWS_CONFIG, &h, sizeof(h), NULL);
	fz_errno_rdonly_ok(w, f, "HWS_CONFIG set", ret);
	if (!ret && f->rdonly)
		FZ_FAIL(w, "HWS_CONFIG set on a file opened read-only succeeded");
	return ret;
}

static int fz_bad_ioctl(struct fz_w *w)
{
	struct fz_file *f = fz_pick_file(w, -1, 0, false);
	unsigned long cmd;
	int one = (int)fz_rand(w, 2);
	void *p = w->scratch;
	bool expect_ok = false;
	int ret;

	if (!f)
		return FZ_SKIP;
	memset(w->scratch, 0, 64);
	switch (fz_rand(w, 8)) {
	case 0:		/* a number past the table */
		cmd = _IO(PTO_IOCTL_MAGIC, _IOC_NR(PTO_IOC_GM_QUOTA) + 1 +
			  fz_rand(w, 0xff - _IOC_NR(PTO_IOC_GM_QUOTA)));
		break;
	case 1:		/* a number of the table with other direction/size */
		cmd = _IOC(1 + fz_rand(w, 3), PTO_IOCTL_MAGIC,
			   fz_rand(w, 0x0d), 1 + fz_rand(w, 0x3fff));
		if (cmd == PTO_IOC_ABI_VERSION)
			cmd = _IOR(PTO_IOCTL_MAGIC, 0, __u64);
		break;
	case 2:		/* another magic (not 0: FIBMAP, FIGETBSZ are the VFS's) */
		cmd = _IO(1 + fz_rand(w, 255), fz_rand(w, 256));
		if (_IOC_TYPE(cmd) == PTO_IOCTL_MAGIC ||
		    cmd == FIONBIO || cmd == FIOCLEX || cmd == FIONCLEX ||
		    cmd == FIOASYNC || cmd == FIOQSIZE)
			cmd = _IO('T', 0x01);
		break;
	case 3:		/* generic file ioctls the VFS handles */
		cmd = fz_pct(w, 50) ? FIONBIO : fz_pct(w, 50) ? FIOCLEX :
								FIONCLEX;
		p = &one;
		expect_ok = true;
		break;
	case 4:
		cmd = PTO_IOC_ABI_VERSION;
		p = fz_pct(w, 50) ? (void *)w->ro : (void *)(w->scratch + 2 * PTO_PAGE);
		break;
	default:	/* a size-first ioctl with a pointer that is not one */
		cmd = _IO(PTO_IOCTL_MAGIC, 1 + fz_rand(w, 0x0c));
		p = fz_pct(w, 50) ? NULL : (void *)(uintptr_t)pto_rng_next(w->r);
		break;
	}
	fz_note(w, (uint64_t)f->fd[0], cmd, (uint64_t)(uintptr_t)p, 0);
	ret = ioctl(fz_fd(w, f), cmd, p) < 0 ? -errno : 0;
	fz_errno_ok(w, "bad ioctl", ret);
	if (!ret && !expect_ok)
		FZ_FAIL(w, "ioctl %#lx (arg %p) succeeded", cmd, p);
	fz_checked(w);
	return ret;
}

/* An mmap the fuzzer asks for: where, how, and the buffer it aims at. */
struct fz_mreq {
	uint64_t off;
	size_t len;
	int prot, flags;
	struct fz_buf *b;		/* a buffer of this process, or NULL */
};

/*
 * Where to map, for file @f: the registers, a buffer (all, part, a page
 * too many, not a page multiple), GM, the edges between them, anywhere,
 * unaligned, or an odd length. Returns 0, or FZ_SKIP (no buffer to aim
 * at).
 */
static int fz_mmap_where(struct fz_w *w, const struct fz_file *f,
			 struct fz_mreq *q)
{
	uint64_t gm_pages = w->dev->info.gm_size / PTO_PAGE;
	struct fz_buf *b;

	switch (fz_rand(w, 20)) {
	case 0: case 1: case 2: case 3: case 4:	/* registers */
		q->off = PTO_MMAP_REGS + fz_rand(w, FZ_REGS_PAGES + 1) * PTO_PAGE;
		q->len = fz_pct(w, 50) ? FZ_REGS_PAGES * PTO_PAGE :
					 (1 + fz_rand(w, FZ_REGS_PAGES + 1)) * PTO_PAGE;
		if (fz_pct(w, 50))
			q->off = PTO_MMAP_REGS;
		break;
	case 5: case 6: case 7: case 8: case 9: case 10: case 11:
		b = fz_pick_buf(w, fz_pct(w, 70) ? f->id : 0, !fz_pct(w, 15));
		q->b = b;
		if (!b)
			return FZ_SKIP;
		q->off = b->off;
		q->len = b->len;
		if (fz_pct(w, 30)) {
			uint64_t pg = fz_rand(w, b->len / PTO_PAGE);

			q->off += pg * PTO_PAGE;
			q->len = (1 + fz_rand(w, b->len / PTO_PAGE - pg)) * PTO_PAGE;
		}
		if (fz_pct(w, 10))
			q->len += PTO_PAGE;	/* one page too many */
		if (fz_pct(w, 10))
			q->len -= fz_rand(w, PTO_PAGE);	/* not a page multiple */
		break;
	case 12: case 13: case 14:
		q->off = PTO_MMAP_GM + fz_rand(w, gm_pages + 2) * PTO_PAGE;
		q->len = (1 + fz_rand(w, 16)) * PTO_PAGE;
		break;
	case 15:
		q->off = PTO_MMAP_GM;
		q->len = w->dev->info.gm_size + (fz_pct(w, 20) ? PTO_PAGE : 0);
		break;
	case 16:
		q->off = fz_pct(w, 50) ? PTO_MMAP_GM - PTO_PAGE :
					 PTO_MMAP_REGS + FZ_REGS_PAGES * PTO_PAGE;
		q->len = PTO_PAGE;
		break;
	case 17:
		q->off = (fz_rand(w, 1ULL << 40) * PTO_PAGE) & ~(PTO_PAGE - 1);
		q->len = PTO_PAGE;
		break;
	case 18:
		q->off = PTO_MMAP_GM + 1 + fz_rand(w, PTO_PAGE - 1);	/* unaligned */
		q->len = PTO_PAGE;
		break;
	default:
		q->off = fz_pct(w, 50) ? PTO_MMAP_REGS : PTO_MMAP_GM;
		q->len = fz_pct(w, 50) ? 0 : fz_pct(w, 50) ? 1 : 1ULL << 40;
		break;
	}
	return 0;
}

/* How to map: the protection (mostly read-write) and the flags. */
static void fz_mmap_how(struct fz_w *w, struct fz_mreq *q)
{
	static const int prots[] = { PROT_READ | PROT_WRITE,
				     PROT_READ | PROT_WRITE,
				     PROT_READ | PROT_WRITE, PROT_READ,
				     PROT_READ, PROT_WRITE,
				     PROT_READ | PROT_EXEC, PROT_NONE };

	q->prot = prots[fz_rand(w, 8)];
	switch (fz_rand(w, 20)) {
	case 0: case 1:
		q->flags = MAP_PRIVATE;
		break;
	case 2:
		q->flags = MAP_SHARED_VALIDATE;
		break;
	case 3:
		q->flags = q->len <= 64 * PTO_PAGE ? MAP_SHARED | MAP_POPULATE :
						     MAP_SHARED;
		break;
	default:
		q->flags = MAP_SHARED;
		break;
	}
}

/*
 * The mmap @q of file @f failed with @err: an errno it may give, and not
 * a denial of a client's own live buffer asked for as the device handed
 * it out. Returns @err.
 */
static int fz_mmap_failed(struct fz_w *w, const struct fz_file *f,
			  const struct fz_mreq *q, int err)
{
	const struct fz_buf *b = q->b;
	bool must;

	switch (-err) {
	case EINVAL: case EACCES: case EPERM: case ENOMEM:
	case EOVERFLOW: case EOPNOTSUPP:
		break;
	default:
		FZ_FAIL(w, "mmap off %#llx len %zu: errno %d",
			(unsigned long long)q->off, q->len, -err);
	}
	/* a client's own live buffer, as the device handed it out */
	must = b && b->live && b->fid == f->id && !f->inherited &&
	       f->role == PTO_ROLE_CLIENT && !(q->prot & PROT_EXEC) &&
	       (q->flags & MAP_TYPE) == MAP_SHARED && q->len &&
	       q->off + PAGE_ALIGN_UP(q->len) <= b->off + b->len &&
	       !(f->rdonly && (q->prot & PROT_WRITE));
	if (must && !fz_denied(err) && err != -ENOMEM)
		FZ_FAIL(w, "mmap of its own buffer (off %#llx len %zu prot %d): %d",
			(unsigned long long)q->off, q->len, q->prot, err);
	fz_checked(w);
	return err;
}

/*
 * What a mapping at @off of file @f is (FZM_*), failing the run if the
 * file's role may not map that.
 */
static int fz_mmap_kind(struct fz_w *w, const struct fz_file *f, uint64_t off)
{
	if (off < PTO_MMAP_GM) {
		if (f->role != PTO_ROLE_AICPU && f->role != PTO_ROLE_EXECUTOR &&
		    f->role != FZ_ROLE_UNKNOWN)
			FZ_FAIL(w, "a file of role %u mapped the registers",
				f->role);
		return FZM_REGS;
	}
	if (f->role != PTO_ROLE_CLIENT && f->role != PTO_ROLE_AICPU &&
	    f->role != PTO_ROLE_EXECUTOR && f->role != FZ_ROLE_UNKNOWN)
		FZ_FAIL(w, "a file of role %u mapped GM", f->role);
	return f->role == PTO_ROLE_CLIENT ? FZM_BUF : FZM_GM;
}

/*
 * Whether @m shows an executor registers it may not write: an executor
 * writes the status page and the cores, nothing before them.
 */
static bool fz_exec_cfg(const struct fz_map *m)
{
	return m->exec_regs &&
	       m->off < PTO_MMAP_REGS + PTO_REGS_EXEC_WRITE_OFFSET;
}

static int fz_mmap(struct fz_w *w)
{
	struct fz_file *f = fz_pick_file(w, -1, 0, false);
	struct fz_map *m = fz_new_map(w);
	struct fz_mreq q = { 0 };
	int fd, err, kind;
	void *p;

	if (!f || !m)
		return FZ_SKIP;
	if (fz_mmap_where(w, f, &q))
		return FZ_SKIP;
	fz_mmap_how(w, &q);
	fd = fz_fd(w, f);
	fz_note(w, (uint64_t)fd, q.off, q.len,
		(uint64_t)(q.prot | q.flags << 8));
	p = pto_mmap(fd, q.len, q.off, q.prot, q.flags, &err);
	if (!p)
		return fz_mmap_failed(w, f, &q, err);
	fz_checked(w);
	if ((q.prot & PROT_EXEC) || (q.flags & MAP_TYPE) == MAP_PRIVATE) {
		FZ_FAIL(w, "mmap with prot %#x flags %#x succeeded", q.prot,
			q.flags);
		munmap(p, q.len);
		return 0;
	}
	kind = fz_mmap_kind(w, f, q.off);
	*m = (struct fz_map){ .p = p, .len = q.len, .off = q.off,
			      .prot = q.prot, .kind = kind, .used = true,
			      .nostore = f->inherited };
	m->exec_regs = kind == FZM_REGS && f->role == PTO_ROLE_EXECUTOR;
	if (fz_exec_cfg(m) && (q.prot & PROT_WRITE))
		FZ_FAIL(w, "an executor mapped the registers at %#llx writable",
			(unsigned long long)q.off);
	return 0;
}

static int fz_munmap(struct fz_w *w)
{
	struct fz_map *m = fz_pick_map(w, -1), *n;
	size_t pages, pg;
	int ret;

	if (!m)
		return FZ_SKIP;
	pages = PAGE_ALIGN_UP(m->len) / PTO_PAGE;
	fz_note(w, (uint64_t)(uintptr_t)m->p, m->len, m->off, 0);
	if (pages < 2 || fz_pct(w, 60)) {
		ret = munmap(m->p, m->len) ? -errno : 0;
		m->used = false;
		return ret;
	}
	pg = fz_pct(w, 30) ? 0 : fz_pct(w, 40) ? pages - 1 :
	     1 + fz_rand(w, pages - 2);
	ret = munmap(m->p + pg * PTO_PAGE, PTO_PAGE) ? -errno : 0;
	if (ret)
		return ret;
	if (pg == 0) {
		m->p += PTO_PAGE;
		m->off += PTO_PAGE;
		m->len = (pages - 1) * PTO_PAGE;
	} else if (pg == pages - 1) {
		m->len = pg * PTO_PAGE;
	} else {
		/* split in two: the tail is a mapping of its own now */
		n = fz_new_map(w);
		if (n) {
			*n = *m;
			n->p = m->p + (pg + 1) * PTO_PAGE;
			n->off = m->off + (pg + 1) * PTO_PAGE;
			n->len = (pages - pg - 1) * PTO_PAGE;
		} else {
			munmap(m->p + (pg + 1) * PTO_PAGE,
			       (pages - pg - 1) * PTO_PAGE);
		}
		m->len = pg * PTO_PAGE;
	}
	return 0;
}

static int fz_mprotect(struct fz_w *w)
{
	static const int prots[] = { PROT_READ, PROT_READ | PROT_WRITE,
				     PROT_READ | PROT_EXEC, PROT_NONE,
				     PROT_WRITE };
	struct fz_map *m = fz_pick_map(w, -1);
	int prot, ret;

	if (!m)
		return FZ_SKIP;
	prot = prots[fz_rand(w, 5)];
	fz_note(w, (uint64_t)(uintptr_t)m->p, m->len, (uint64_t)prot, 0);
	ret = mprotect(m->p, m->len, prot) ? -errno : 0;
	if (!ret && (prot & PROT_EXEC))
		FZ_FAIL(w, "mprotect PROT_EXEC of a device mapping succeeded");
	if (!ret && (prot & PROT_WRITE) && fz_exec_cfg(m))
		FZ_FAIL(w, "mprotect made an executor's registers writable");
	if (ret && ret != -EACCES && ret != -ENOMEM && ret != -EINVAL)
		FZ_FAIL(w, "mprotect: errno %d", -ret);
	fz_checked(w);
	if (!ret)
		m->prot = prot;
	return ret;
}

static int fz_mremap(struct fz_w *w)
{
	struct fz_map *m = fz_pick_map(w, -1);
	void *q, *to;
	int ret = 0;

	if (!m)
		return FZ_SKIP;
	fz_note(w, (uint64_t)(uintptr_t)m->p, m->len, m->off, 0);
	switch (fz_rand(w, 3)) {
	case 0:		/* grow: VM_DONTEXPAND refuses */
		q = mremap(m->p, m->len, m->len + PTO_PAGE,
			   fz_pct(w, 50) ? MREMAP_MAYMOVE : 0);
		if (q != MAP_FAILED) {
			FZ_FAIL(w, "mremap grew a device mapping");
			m->p = q;
			m->len += PTO_PAGE;
			return 0;
		}
		ret = -errno;
		fz_checked(w);
		break;
	case 1:		/* shrink */
		if (m->len <= PTO_PAGE)
			return FZ_SKIP;
		q = mremap(m->p, m->len, PAGE_ALIGN_UP(m->len) - PTO_PAGE, 0);
		if (q == MAP_FAILED)
			return -errno;
		m->len = PAGE_ALIGN_UP(m->len) - PTO_PAGE;
		break;
	default:	/* move onto a reserved range */
		to = mmap(NULL, m->len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
		if (to == MAP_FAILED)
			return FZ_SKIP;
		q = mremap(m->p, m->len, m->len, MREMAP_MAYMOVE | MREMAP_FIXED,
			   to);
		if (q == MAP_FAILED) {
			ret = -errno;
			munmap(to, m->len);
			break;
		}
		m->p = q;
		break;
	}
	if (ret && ret != -EFAULT && ret != -EINVAL && ret != -ENOMEM)
		FZ_FAIL(w, "mremap: errno %d", -ret);
	return ret;
}

/* A register userspace may store to, at its offset in the register file. */
static uint64_t fz_reg_off(struct fz_w *w)
{
	static const unsigned int core_fields[] = {
		offsetof(struct pto_core_regs, data_main_base),
		offsetof(struct pto_core_regs, cond),
		offsetof(struct pto_core_regs, parked),
		offsetof(struct pto_core_regs, irq_en),
		offsetof(struct pto_core_regs, ts_dispatch),
		offsetof(struct pto_core_regs, ts_end),
		offsetof(struct pto_core_regs, task),
	};

	switch (fz_rand(w, 8)) {
	case 0:
		return PTO_REGS_INFO_OFFSET +
		       offsetof(struct pto_regs_info, aicpu_irq_en);
	case 1:
		return PTO_REGS_HWS_OFFSET +
		       offsetof(struct pto_regs_hws, sip_report_complete) +
		       8 * fz_rand(w, (sizeof(struct pto_regs_hws) -
				       offsetof(struct pto_regs_hws,
						sip_report_complete)) / 8);
	default:
		return PTO_REGS_CORE_OFFSET +
		       64 * fz_rand(w, w->dev->info.nr_cores) +
		       core_fields[fz_rand(w, 7)];
	}
}

/* Is [dev, dev + 8) in a live buffer of this process? */
static bool fz_own_live(struct fz_w *w, uint64_t dev)
{
	unsigned int i;

	for (i = 0; i < FZ_BUFS; i++) {
		struct fz_buf *b = &w->bufs[i];

		if (b->used && b->live && dev >= b->dev &&
		    dev + 8 <= b->dev + b->len)
			return true;
	}
	return false;
}

/*
 * Loads and stores through a mapping. Stores go only where this process
 * may write without disturbing another: registers userspace owns, its
 * own buffers (through a client mapping always, through a full GM
 * mapping while it holds them).
 */
static int fz_touch(struct fz_w *w)
{
	struct fz_map *m = fz_pick_map(w, -1);
	unsigned int i, n;

	if (!m || m->prot == PROT_NONE || m->len < 8)
		return FZ_SKIP;
	n = 1 + (unsigned int)fz_rand(w, 4);
	for (i = 0; i < n; i++) {
		uint64_t at = fz_rand(w, m->len / 8) * 8, v = pto_rng_next(w->r);
		bool store = (m->prot & PROT_WRITE) && !m->nostore &&
			     fz_pct(w, 50);
		volatile uint64_t *q;

		if (store && m->kind == FZM_REGS) {
			uint64_t reg = fz_reg_off(w) & ~7ULL;

			store = reg >= m->off && reg + 8 <= m->off + m->len;
			if (store)
				at = reg - m->off;
		} else if (store && m->kind == FZM_GM) {
			store = !w->child &&
				fz_own_live(w, PTO_GM_DEV_BASE + m->off -
					    PTO_MMAP_GM + at);
		}
		q = (volatile uint64_t *)(m->p + at);
		fz_note(w, (uint64_t)(uintptr_t)q, m->off + at, m->len,
			(uint64_t)(m->prot | m->kind << 8 | store << 16));
		if (store)
			*q = v;
		else if (m->prot & PROT_READ)
			v = *q;
	}
	return 0;
}

static int fz_read(struct fz_w *w)
{
	struct fz_file *f = fz_pick_role(w, PTO_ROLE_AICPU, false);
	size_t count = fz_pct(w, 75) ? 4 : fz_rand(w, 16);
	void *p = w->scratch;
	ssize_t n;
	int ret;

	if (!f)
		return FZ_SKIP;
	if (fz_pct(w, 10))
		p = fz_pct(w, 50) ? NULL : (void *)w->ro;
	fz_note(w, (uint64_t)f->fd[0], count, (uint64_t)(uintptr_t)p, 0);
	fz_timer(FZ_TIMER_FAST);
	n = read(fz_fd(w, f), p, count);
	ret = n < 0 ? -errno : 0;
	fz_timer(FZ_TIMER_OFF);
	switch (-ret) {
	case 0: case EACCES: case EPERM: case EINVAL: case EAGAIN: case EINTR:
	case EFAULT: case EBADF:
		break;
	default:
		FZ_FAIL(w, "read: errno %d", -ret);
	}
	if (n >= 0 && (n != 4 || count != 4 ||
		       (f->role != PTO_ROLE_AICPU && f->role != FZ_ROLE_UNKNOWN)))
		FZ_FAIL(w, "read of %zu bytes on a file of role %u returned %zd",
			count, f->role, n);
	fz_checked(w);
	return ret;
}

static int fz_poll(struct fz_w *w)
{
	struct fz_file *f = fz_pick_file(w, PTO_ROLE_AICPU, 50, false);
	struct pollfd pfd;
	int ret;

	if (!f)
		return FZ_SKIP;
	pfd.fd = fz_fd(w, f);
	pfd.events = POLLIN | (fz_pct(w, 50) ? POLLOUT : 0);
	ret = poll(&pfd, 1, (int)fz_rand(w, 2));
	if (ret < 0)
		return -errno;
	if (f->role != PTO_ROLE_AICPU && f->role != FZ_ROLE_UNKNOWN &&
	    !(pfd.revents & POLLERR))
		FZ_FAIL(w, "poll on a file of role %u: revents %#x", f->role,
			pfd.revents);
	fz_checked(w);
	return 0;
}

static void fz_kid_reaped(struct fz_w *w, pid_t pid, int st, bool killed)
{
	if (WIFSIGNALED(st) && (WTERMSIG(st) != SIGKILL || !killed))
		FZ_FAIL(w, "fork child %d died of signal %d (%s)", (int)pid,
			WTERMSIG(st), strsignal(WTERMSIG(st)));
	else if (WIFEXITED(st) && WEXITSTATUS(st))
		FZ_FAIL(w, "fork child %d exited %d", (int)pid,
			WEXITSTATUS(st));
}

static void fz_run(struct fz_w *w, uint64_t budget);

static int fz_fork(struct fz_w *w)
{
	unsigned int i, k = FZ_KIDS;
	bool killed = false;
	pid_t pid;
	int st;

	if (w->child)
		return FZ_SKIP;
	for (i = 0; i < FZ_KIDS; i++) {
		if (w->kids[i] > 0 &&
		    waitpid(w->kids[i], &st, WNOHANG) == w->kids[i]) {
			fz_kid_reaped(w, w->kids[i], st, true);
			w->kids[i] = 0;
		}
		if (!w->kids[i])
			k = i;
	}
	if (k == FZ_KIDS)
		return FZ_SKIP;
	fz_note(w, 0, 0, 0, 0);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* the child: its own choices, the worker's files and maps */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL))
			_exit(1);
		pto_fz_self = NULL;
		w->slot = NULL;
		w->child = true;
		w->r->s ^= 0x5bd1e995ULL;
		/*
		 * The read-only page is shared memory: a page of its own, or
		 * the worker, running on meanwhile, would write its arguments
		 * into the one this process's ioctls read theirs back from.
		 */
		fz_ro_unmap(w);
		if (fz_ro_map(w))
			_exit(1);
		for (i = 0; i < FZ_FILES; i++) {
			struct fz_file *f = &w->files[i];

			f->inherited = fz_file_open(f);
			if (f->inherited && f->role == PTO_ROLE_NONE)
				f->role = FZ_ROLE_UNKNOWN;
		}
		fz_run(w, 1 + fz_rand(w, 20));
		_exit(0);
	}
	/* without random kills the run stays reproducible: wait for it */
	if (w->fz->kill_ms && fz_pct(w, 60)) {
		if (fz_pct(w, 50)) {
			usleep((useconds_t)fz_rand(w, 2000));
			kill(pid, SIGKILL);
			killed = true;
		} else {
			w->kids[k] = pid;	/* reaped later, or orphaned */
			return 0;
		}
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	fz_kid_reaped(w, pid, st, killed);
	return 0;
}

typedef int (*fz_op_fn)(struct fz_w *w);

static const fz_op_fn fz_ops[FZ_NR] = {
	[FZ_OPEN] = fz_open, [FZ_CLOSE] = fz_close, [FZ_DUP] = fz_dup,
	[FZ_SET_ROLE] = fz_set_role, [FZ_ABI_VERSION] = fz_abi_version,
	[FZ_GET_INFO] = fz_get_info, [FZ_GM_ALLOC] = fz_gm_alloc,
	[FZ_GM_FREE] = fz_gm_free, [FZ_GM_LOOKUP] = fz_gm_lookup,
	[FZ_CORE_ATTACH] = fz_attach, [FZ_CORE_DETACH] = fz_detach,
	[FZ_CORE_WAIT] = fz_core_wait, [FZ_KICK] = fz_kick,
	[FZ_RAISE_IRQ] = fz_raise_irq, [FZ_IRQ_WAIT] = fz_irq_wait,
	[FZ_HWS_GET] = fz_hws_get, [FZ_HWS_SET] = fz_hws_set,
	[FZ_BAD_IOCTL] = fz_bad_ioctl, [FZ_MMAP] = fz_mmap,
	[FZ_MUNMAP] = fz_munmap, [FZ_MPROTECT] = fz_mprotect,
	[FZ_MREMAP] = fz_mremap, [FZ_TOUCH] = fz_touch, [FZ_READ] = fz_read,
	[FZ_POLL] = fz_poll, [FZ_FORK] = fz_fork, [FZ_GM_PIN] = fz_gm_pin,
	[FZ_GM_UNPIN] = fz_gm_unpin, [FZ_CORE_WAIT_ANY] = fz_core_wait_any,
};

/* @budget operations (fewer if the run reaches its target). */
static void fz_run(struct fz_w *w, uint64_t budget)
{
	uint64_t done = 0;
	unsigned int skips = 0;

	while (done < budget && skips < 1000) {
		unsigned int op = pto_rng_weighted(w->r, fz_weights, FZ_NR);
		int ret;

		if (w->slot)
			pto_fz_begin(w->slot, op, 0, 0, 0, 0);
		ret = fz_ops[op](w);
		if (ret == FZ_SKIP) {
			skips++;
			continue;
		}
		skips = 0;
		done++;
		if (pto_fz_end(w->fz, w->slot, op, ret))
			break;
	}
}

/* Close everything, or leave it to exit(). */
static void fz_cleanup(struct fz_w *w)
{
	unsigned int i;
	int st;

	for (i = 0; i < FZ_KIDS; i++) {
		if (w->kids[i] <= 0)
			continue;
		if (fz_pct(w, 50))
			kill(w->kids[i], SIGKILL);
		if (waitpid(w->kids[i], &st, 0) == w->kids[i])
			fz_kid_reaped(w, w->kids[i], st, true);
	}
	if (fz_pct(w, 50))
		return;
	for (i = 0; i < FZ_MAPS; i++)
		if (w->maps[i].used)
			munmap(w->maps[i].p, w->maps[i].len);
	for (i = 0; i < FZ_FILES; i++) {
		if (!w->files[i].id)
			continue;
		if (w->files[i].fd[0] >= 0)
			close(w->files[i].fd[0]);
		if (w->files[i].fd[1] >= 0)
			close(w->files[i].fd[1]);
	}
	fz_ro_unmap(w);
}

static void fz_worker(struct pto_fz *fz, struct pto_fz_slot *s,
		      struct pto_rng *r, void *ctx)
{
	static struct fz_w w;
	struct sigaction sa = { .sa_handler = fz_alarm };

	(void)ctx;
	memset(&w, 0, sizeof(w));
	w.fz = fz;
	w.dev = (struct fz_dev *)fz->priv;
	w.slot = s;
	w.r = r;
	/* SIGALRM interrupts waits: no SA_RESTART */
	sigaction(SIGALRM, &sa, NULL);
	if (pto_rng_pct(r, 25)) {
		if (pto_drop_privileges()) {
			FZ_FAIL(&w, "cannot become nobody: %s", strerror(errno));
			return;
		}
		/* a change of credentials clears the parent-death signal */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1)
			_exit(0);
		__atomic_fetch_add(&w.dev->unpriv, 1, __ATOMIC_RELAXED);
		w.nobody = true;
	}
	w.scratch = mmap(NULL, 3 * PTO_PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w.scratch == MAP_FAILED ||
	    mprotect(w.scratch + 2 * PTO_PAGE, PTO_PAGE, PROT_NONE) ||
	    fz_ro_map(&w)) {
		FZ_FAIL(&w, "setup: %s", strerror(errno));
		return;
	}
	fz_run(&w, 500 + pto_rng_below(r, 6000));
	fz_cleanup(&w);
}

/* ---- the tests ------------------------------------------------------------------ */

/*
 * The device's counters the run checks: the first FZ_IDLE must be back
 * to their values once every process is gone; cores_dead once the cores
 * are reset (an executor killed with cores attached leaves them DEAD, as
 * it should); allocs and frees must have grown alike.
 */
static const char *const fz_counters[] = {
	"gm_bytes_used", "gm_buffers", "cores_online", "aicpu", "pins",
	"cores_dead", "allocs", "frees",
};
#define FZ_NCOUNTERS	(sizeof(fz_counters) / sizeof(fz_counters[0]))
#define FZ_IDLE		5
#define FZ_DEAD		5
#define FZ_ALLOCS	6
#define FZ_FREES	7

static int fz_read_counters(__u64 *v)
{
	unsigned int i;
	int ret;

	for (i = 0; i < FZ_NCOUNTERS; i++) {
		ret = pto_sysfs_kv("counters", fz_counters[i], &v[i]);
		if (ret)
			return ret;
	}
	return 0;
}

FIXTURE(fuzz) {
	struct pto_info info;
	struct pto_hws_cfg orig;
	__u64 before[FZ_NCOUNTERS];
};

FIXTURE_SETUP(fuzz)
{
	int fd, ret;

	PTO_OPEN_OR_SKIP(fd);
	ASSERT_EQ(0, pto_get_info(fd, &self->info));
	ASSERT_EQ(0, pto_hws_get(fd, &self->orig));
	close(fd);
	ASSERT_EQ(0, pto_reset_cores(self->info.nr_cores));
	ret = fz_read_counters(self->before);
	ASSERT_EQ(0, ret) TH_LOG("%s/counters: %s", pto_sysfs_dir(),
				 strerror(-ret));
}

FIXTURE_TEARDOWN(fuzz)
{
}

/*
 * The engine for one run: @ops operations (0: the environment's, and so
 * the rest), told the device's info and HWS configuration from @self.
 * Returns NULL after failing the test.
 */
static struct pto_fz *fz_setup(struct __test_metadata *_metadata,
			       FIXTURE_DATA(fuzz) *self, uint64_t ops,
			       unsigned int procs, unsigned int kill_ms,
			       uint64_t seed)
{
	struct pto_fz *fz;
	struct fz_dev *dev;

	fz = pto_fz_new("PTO_FUZZ", fz_names, FZ_NR, FZ_OPS_DEFAULT,
			FZ_PROCS_DEFAULT, FZ_KILL_MS_DEFAULT);
	if (!fz) {
		EXPECT_NE(NULL, fz);
		return NULL;
	}
	if (ops) {
		fz->target = ops;
		fz->nr_procs = procs;
		fz->kill_ms = kill_ms;
		fz->seed = seed;
	}
	dev = (struct fz_dev *)fz->priv;
	dev->info = self->info;
	dev->orig = self->orig;
	return fz;
}

/*
 * The counters after the run, in @after: those that must come back have
 * their values from before, and as many buffers were freed as allocated.
 */
static void fz_counters_back(struct __test_metadata *_metadata,
			     FIXTURE_DATA(fuzz) *self, __u64 *after)
{
	unsigned int i;
	__s64 until;
	int ret;

	/*
	 * Every process is gone, and with it every file and mapping; a file
	 * is released before its process is reaped, so the counters are
	 * final. The wait only guards against a slow deferred fput.
	 */
	until = pto_deadline_ms(5000);
	do {
		ret = fz_read_counters(after);
		if (ret || !memcmp(after, self->before, FZ_IDLE * sizeof(__u64)))
			break;
		pto_sleep_ms(10);
	} while (pto_now_ns() < until);
	EXPECT_EQ(0, ret);
	for (i = 0; i < FZ_IDLE; i++) {
		EXPECT_EQ(self->before[i], after[i])
			TH_LOG("counter %s: %llu before the run, %llu after",
			       fz_counters[i],
			       (unsigned long long)self->before[i],
			       (unsigned long long)after[i]);
	}
	/* every buffer allocated went back: as many frees as allocs */
	EXPECT_EQ(after[FZ_ALLOCS] - self->before[FZ_ALLOCS],
		  after[FZ_FREES] - self->before[FZ_FREES]);
	printf("# counters after the run: gm_bytes_used %llu gm_buffers %llu cores_online %llu aicpu %llu pins %llu cores_dead %llu; %llu allocs, %llu frees in the run\n",
	       (unsigned long long)after[0], (unsigned long long)after[1],
	       (unsigned long long)after[2], (unsigned long long)after[3],
	       (unsigned long long)after[4], (unsigned long long)after[FZ_DEAD],
	       (unsigned long long)(after[FZ_ALLOCS] - self->before[FZ_ALLOCS]),
	       (unsigned long long)(after[FZ_FREES] - self->before[FZ_FREES]));
}

/*
 * The device is usable after the run: all GM free, the HWS configuration
 * as it was, every core back (dead ones with an attach) in @after.
 */
static void fz_device_back(struct __test_metadata *_metadata,
			   FIXTURE_DATA(fuzz) *self, __u64 *after)
{
	struct pto_info info;
	int fd;

	fd = pto_open();
	EXPECT_LE(0, fd);
	if (fd >= 0) {
		struct pto_hws_cfg now;

		EXPECT_EQ(0, pto_get_info(fd, &info));
		EXPECT_EQ(info.gm_size, info.gm_free);
		EXPECT_EQ(0, pto_hws_set(fd, &self->orig, NULL));
		EXPECT_EQ(0, pto_hws_get(fd, &now));
		EXPECT_EQ(0, memcmp(&now, &self->orig, sizeof(now)));
		close(fd);
	}
	/* dead cores come back with an attach, as after any crash */
	EXPECT_EQ(0, pto_reset_cores(self->info.nr_cores));
	EXPECT_EQ(0, fz_read_counters(after));
	EXPECT_EQ(self->before[FZ_DEAD], after[FZ_DEAD]);
	EXPECT_EQ(self->before[2], after[2]);
}

/*
 * One run of the fuzzer with @procs workers (0: the environment's), then
 * the device back at rest: every counter of fz_counters[] that must come
 * back has its value from before, GM is all free, every core can be
 * reset, the HWS configuration is put back. Returns the engine (for
 * tallies) or NULL after failing the test.
 */
static struct pto_fz *fz_once(struct __test_metadata *_metadata,
			      FIXTURE_DATA(fuzz) *self, uint64_t ops,
			      unsigned int procs, unsigned int kill_ms,
			      uint64_t seed)
{
	__u64 after[FZ_NCOUNTERS];
	struct pto_fz *fz;
	struct fz_dev *dev;
	unsigned int i;
	int ret;

	fz = fz_setup(_metadata, self, ops, procs, kill_ms, seed);
	if (!fz)
		return NULL;
	dev = (struct fz_dev *)fz->priv;
	printf("# pto_fuzz: seed %#llx, %llu operations, %u processes, a SIGKILL every %u ms on average\n",
	       (unsigned long long)fz->seed, (unsigned long long)fz->target,
	       fz->nr_procs, fz->kill_ms);
	fflush(stdout);
	ret = pto_fz_run(fz, fz_worker, NULL);
	EXPECT_EQ(0, ret) TH_LOG("the fuzzer could not run: %s", strerror(-ret));
	/* what it did and found */
	pto_fz_report(fz, stdout);
	printf("# %llu invariants checked, %u workers ran as nobody\n",
	       (unsigned long long)dev->checks, dev->unpriv);
	for (i = 0; i < fz->nr_findings && i < PTO_FZ_MAX_FINDINGS; i++)
		TH_LOG("finding: %s", fz->finding[i]);
	EXPECT_EQ(0, fz->nr_findings)
		TH_LOG("%u findings; PTO_FUZZ_SEED=%#llx repeats the run",
		       fz->nr_findings, (unsigned long long)fz->seed);
	EXPECT_LE(fz->target, fz->total);
	/* then the device at rest */
	fz_counters_back(_metadata, self, after);
	fz_device_back(_metadata, self, after);
	return fz;
}

/* The fuzzer as configured by the environment (default: 100000 operations). */
TEST_F_TIMEOUT(fuzz, device, 7200)
{
	struct pto_fz *fz = fz_once(_metadata, self, 0, 0, 0, 0);

	if (fz)
		pto_fz_free(fz);
}

/*
 * @op's tally as same_seed_same_run compares it: a timed wait (CORE_WAIT,
 * IRQ_WAIT) ends by its deadline (ETIMEDOUT) or by the timer that guards
 * it (EINTR), and which comes first depends on the guest's speed when a
 * mutated deadline lands near the guard's 2 s: one bucket for both.
 */
static struct pto_fz_tally fz_tally_canon(const struct pto_fz *fz,
					  unsigned int op)
{
	struct pto_fz_tally t = fz->tally[op];

	if (op == FZ_CORE_WAIT || op == FZ_IRQ_WAIT) {
		t.err[ETIMEDOUT] += t.err[EINTR];
		t.err[EINTR] = 0;
	}
	return t;
}

/*
 * One process and no kills: the same seed gives the same run, operation
 * for operation and errno for errno (a timed wait's ETIMEDOUT and EINTR
 * as one: fz_tally_canon()).
 */
TEST_F_TIMEOUT(fuzz, same_seed_same_run, 300)
{
	uint64_t seed = pto_fz_env("PTO_FUZZ", "SEED",
				   (uint64_t)pto_now_ns() * 2654435761ULL);
	__u64 irqs[3] = { 0 };
	struct pto_fz *a, *b;
	unsigned int op;

	/*
	 * The device's interrupt count around each run: only what the run
	 * raised moves it, so on a difference below the two deltas say
	 * whether an interrupt came from outside the run.
	 */
	ASSERT_EQ(0, pto_sysfs_kv("counters", "irqs", &irqs[0]));
	a = fz_once(_metadata, self, 3000, 1, 0, seed);
	ASSERT_NE(NULL, a);
	ASSERT_EQ(0, pto_sysfs_kv("counters", "irqs", &irqs[1]));
	b = fz_once(_metadata, self, 3000, 1, 0, seed);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, pto_sysfs_kv("counters", "irqs", &irqs[2]));
	for (op = 0; op < FZ_NR; op++) {
		struct pto_fz_tally ta = fz_tally_canon(a, op);
		struct pto_fz_tally tb = fz_tally_canon(b, op);
		unsigned int e;

		EXPECT_EQ(0, memcmp(&ta, &tb, sizeof(ta))) {
			TH_LOG("%s: %llu calls, %llu ok the first time, %llu, %llu the second",
			       fz_names[op], (unsigned long long)ta.calls,
			       (unsigned long long)ta.ok,
			       (unsigned long long)tb.calls,
			       (unsigned long long)tb.ok);
			for (e = 0; e < PTO_FZ_NERR; e++)
				if (ta.err[e] != tb.err[e])
					TH_LOG("%s: %s %llu the first time, %llu the second",
					       fz_names[op], pto_fz_errname(e),
					       (unsigned long long)ta.err[e],
					       (unsigned long long)tb.err[e]);
			TH_LOG("device interrupts during the first run %llu, the second %llu",
			       (unsigned long long)(irqs[1] - irqs[0]),
			       (unsigned long long)(irqs[2] - irqs[1]));
		}
	}
	pto_fz_free(a);
	pto_fz_free(b);
}

TEST_HARNESS_MAIN
