// SPDX-License-Identifier: MIT
/*
 * ptod_udev.c - ptod on the user-mode device (ptod -d user)
 *
 * ptod creates the device (daemon/udev: two memfds), is its AICPU and
 * runs its device side: the GM allocator, core liveness, the HWS
 * registers' validation. pto-aicore gets the memfds as inherited
 * descriptors (-u REGS_FD,GM_FD). A client opens the device on a
 * connection of its own (PTO_MSG_DEV_OPEN): ptod answers with the
 * device's description, GM's memfd and the client's "device file", a
 * small sealed memfd that stands for the client's buffers as an open
 * /dev/ptoN does on pto.ko: its GM_ALLOC and GM_FREE go over that
 * connection, its hello passes the file, and ptod checks every address
 * the client names against the buffers of that file.
 *
 * A file (struct ptod_ufile) lives while the connection that opened it is
 * open or a client that named it in its hello is; then its handles go.
 * Only the main thread creates, refers to and drops files; runner threads
 * pin buffers of a file their client holds. ptod's pins are references
 * kept by its own file (the AICPU's, which also holds the runtimes' GM):
 * a pinned buffer's memory stays out of the pool until ptod unpins it,
 * whatever the client frees.
 *
 * The device backend given to pto2: kick, irq_count, irq_wait and
 * irq_wake (ptod can raise the interrupt of a device it runs itself) of
 * daemon/udev.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pto-private/hws_regs.h>

#include "ptod.h"
#include "pto_udev.h"

struct ptod_ufile {
	struct ptod_ufile *next;	/* ptod_udev.files */
	unsigned int refs;
	int token;			/* ptod's copy of the client's file */
	dev_t dev;
	ino_t ino;
	struct pto_udev_file *f;
};

struct ptod_udev {
	struct pto_udev *u;
	struct pto_udev_gm *gm;
	struct pto_udev_file *aicpu;	/* ptod's own buffers: runtimes */
	struct ptod_ufile *files;
};

static struct pto_udev *U(struct ptod *d)
{
	return d->udev->u;
}

/* ---- The device backend of pto2 --------------------------------------------- */

static int udev_kick(void *ctx, uint32_t core)
{
	return pto_udev_kick(U(ctx), core);
}

static uint32_t udev_irq_count(void *ctx)
{
	return pto_udev_irq_count(U(ctx));
}

static int udev_irq_wait(void *ctx, uint32_t *count, int64_t deadline_ns)
{
	return pto_udev_irq_wait(U(ctx), count, deadline_ns);
}

static void udev_irq_wake(void *ctx)
{
	pto_udev_irq_raise(U(ctx));
}

/* ---- Open, close --------------------------------------------------------------------- */

static int udev_create(struct ptod *d)
{
	struct pto_udev_config cfg;
	char err[256];
	int ret;

	if (pto_udev_config_from_env(&cfg, err, sizeof(err))) {
		ptod_log(PTOD_LOG_ERR, "user-mode device: %s", err);
		return -EINVAL;
	}
	d->udev = calloc(1, sizeof(*d->udev));
	if (!d->udev)
		return -ENOMEM;
	ret = pto_udev_create(&cfg, &d->udev->u);
	if (!ret)
		ret = pto_udev_gm_create(d->udev->u, &d->udev->gm);
	if (!ret)
		ret = pto_udev_file_create(d->udev->gm, &d->udev->aicpu);
	if (ret)
		ptod_log(PTOD_LOG_ERR, "cannot create the user-mode device: %s",
			 strerror(-ret));
	return ret;
}

static int udev_open(struct ptod *d)
{
	struct pto_udev *u;
	int ret = udev_create(d);

	if (ret)
		return ret;
	u = U(d);
	d->info = u->info;
	d->regs = u->regs;
	d->gm.host = u->gm;
	d->gm.dev_base = u->info.gm_dev_base;
	d->gm.size = u->info.gm_size;
	d->pdev.ctx = d;
	d->pdev.kick = udev_kick;
	d->pdev.irq_count = udev_irq_count;
	d->pdev.irq_wait = udev_irq_wait;
	d->pdev.irq_wake = udev_irq_wake;
	d->exec_opt = "-u";
	snprintf(d->exec_arg, sizeof(d->exec_arg), "%d,%d", u->regs_fd,
		 u->gm_fd);
	d->exec_fds[0] = u->regs_fd;
	d->exec_fds[1] = u->gm_fd;
	return 0;
}

static void udev_close(struct ptod *d)
{
	struct ptod_udev *ud = d->udev;

	if (!ud)
		return;
	if (ud->u)
		pto_udev_aicpu_release(ud->u);
	/* clients are gone: every file went with them */
	if (ud->aicpu)
		pto_udev_file_release(ud->aicpu);
	pto_udev_gm_destroy(ud->gm);
	pto_udev_destroy(ud->u);
	free(ud);
	d->udev = NULL;
	d->regs = NULL;
}

/* ---- GM of ptod ------------------------------------------------------------------- */

/* No GM quota here (-q is refused): @uid is not charged. */
static int udev_gm_alloc(struct ptod *d, uint64_t len, uid_t uid,
			 uint32_t *handle, uint64_t *dev_addr)
{
	struct pto_udev_buf b;
	int ret = pto_udev_gm_alloc(d->udev->aicpu, len, 0, &b);

	(void)uid;
	if (!ret) {
		*handle = b.handle;
		*dev_addr = b.dev_addr;
	}
	return ret;
}

static void udev_gm_free(struct ptod *d, uint32_t handle)
{
	if (pto_udev_gm_free(d->udev->aicpu, handle))
		ptod_log(PTOD_LOG_ERR, "GM_FREE %u: no such buffer", handle);
}

/* ---- Clients' files ----------------------------------------------------------------- */

/* A new file: its token, a sealed empty memfd that names it. */
static struct ptod_ufile *ufile_new(struct ptod *d)
{
	struct ptod_ufile *uf = calloc(1, sizeof(*uf));
	struct ptod_fd_id id;

	if (!uf)
		return NULL;
	uf->token = memfd_create("pto-user-client", MFD_CLOEXEC |
				 MFD_ALLOW_SEALING);
	if (uf->token < 0 || ptod_fd_id(uf->token, &id) ||
	    fcntl(uf->token, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
		  F_SEAL_WRITE | F_SEAL_SEAL) ||
	    pto_udev_file_create(d->udev->gm, &uf->f)) {
		if (uf->token >= 0)
			close(uf->token);
		free(uf);
		return NULL;
	}
	uf->dev = id.dev;
	uf->ino = id.ino;
	uf->refs = 1;
	uf->next = d->udev->files;
	d->udev->files = uf;
	return uf;
}

static void ufile_put(struct ptod *d, struct ptod_ufile *uf)
{
	struct ptod_ufile **pp;

	if (!uf || --uf->refs)
		return;
	for (pp = &d->udev->files; *pp; pp = &(*pp)->next)
		if (*pp == uf) {
			*pp = uf->next;
			break;
		}
	pto_udev_file_release(uf->f);	/* its handles go; ptod's pins stay */
	close(uf->token);
	free(uf);
}

/* A hello's file: one of the tokens ptod handed out and still holds. */
static int udev_client_file(struct client *c, int fd)
{
	struct ptod_ufile *uf;
	struct ptod_fd_id id;

	if (ptod_fd_id(fd, &id) || id.mode != S_IFREG)
		return -ENODEV;
	for (uf = c->d->udev->files; uf; uf = uf->next)
		if (uf->dev == id.dev && uf->ino == id.ino) {
			uf->refs++;
			c->uf = uf;
			return 0;
		}
	return -ENODEV;
}

static void udev_client_release(struct client *c)
{
	ufile_put(c->d, c->uf);
	ufile_put(c->d, c->own);
	c->uf = c->own = NULL;
}

/*
 * GM_PIN: a reference on the buffer of the client's file that holds the
 * range, kept by ptod's own file (as pto.ko's AICPU file keeps its pins):
 * until udev_unpin(), the client's GM_FREE or the end of its file leaves
 * the memory out of the pool (user-device.rst, "Pins").
 */
static int udev_pin(struct client *c, uint64_t addr, uint64_t len,
		    struct ptod_pin *out)
{
	struct pto_udev_buf b;
	uint32_t id;
	int ret;

	if (!c->uf)
		return -ENOENT;
	ret = pto_udev_gm_pin(c->d->udev->aicpu, c->uf->f, addr, len, &id, &b);
	if (ret)
		return ret;
	*out = (struct ptod_pin){ .start = b.dev_addr,
				  .end = b.dev_addr + b.len, .id = id };
	return 0;
}

static void udev_unpin(struct ptod *d, uint32_t id)
{
	if (pto_udev_gm_unpin(d->udev->aicpu, id))
		ptod_log(PTOD_LOG_ERR, "GM_UNPIN %u: no such pin", id);
}

static void udev_exec_gone(struct ptod *d, pid_t pid)
{
	int n = pto_udev_executor_gone(U(d), pid);

	if (n)
		ptod_log(PTOD_LOG_INFO, "%d cores of pid %d marked dead", n,
			 (int)pid);
}

static bool udev_peer_ok(struct ptod *d, uid_t uid)
{
	(void)d;
	return uid == geteuid() || uid == 0;
}

/* ---- Device messages ------------------------------------------------------------------- */

static void empty_reply(struct pto_msg *r, int status)
{
	memset(r, 0, offsetof(struct pto_msg, text) + 1);
	r->type = PTO_MSG_REPLY;
	r->status = status;
}

/* DEV_OPEN: a file for this connection, its token and GM's memfd. */
static void dev_open(struct client *c)
{
	struct ptod *d = c->d;
	struct pto_udev_gm_stats st;
	struct pto_msg r;
	int fds[2];

	if (c->own) {
		ptod_reply(c, -EALREADY, "this connection opened the device already");
		return;
	}
	c->own = ufile_new(d);
	if (!c->own) {
		ptod_reply(c, -ENOMEM, "cannot open the device: %s",
			   strerror(errno ? errno : ENOMEM));
		return;
	}
	pto_udev_gm_stats(d->udev->gm, &st);
	empty_reply(&r, 0);
	r.u.dev.info = d->info;
	r.u.dev.info.gm_free = d->info.gm_size - st.bytes_used;
	fds[0] = c->own->token;
	fds[1] = U(d)->gm_fd;
	ptod_send_fds(c, &r, fds, 2);
	ptod_log(PTOD_LOG_DEBUG, "client %u opened the device", c->id);
}

static void gm_alloc(struct client *c, struct pto_msg *m)
{
	struct pto_udev_buf b;
	struct pto_msg r;
	int ret;

	if (!c->own) {
		ptod_reply(c, -EPROTO, "GM_ALLOC before DEV_OPEN");
		return;
	}
	ret = pto_udev_gm_alloc(c->own->f, m->u.gm.len, m->u.gm.align, &b);
	if (ret) {
		ptod_reply(c, ret, "GM_ALLOC of %" PRIu64 " bytes: %s",
			   m->u.gm.len, strerror(-ret));
		return;
	}
	empty_reply(&r, 0);
	r.u.gm.len = b.len;
	r.u.gm.handle = b.handle;
	r.u.gm.dev_addr = b.dev_addr;
	r.u.gm.mmap_offset = b.dev_addr - PTO_GM_DEV_BASE;
	ptod_send(c, &r);
}

static void gm_free(struct client *c, struct pto_msg *m)
{
	int ret;

	if (!c->own) {
		ptod_reply(c, -EPROTO, "GM_FREE before DEV_OPEN");
		return;
	}
	ret = pto_udev_gm_free(c->own->f, m->u.gm.handle);
	if (ret)
		ptod_reply(c, ret, "GM_FREE: no buffer %u", m->u.gm.handle);
	else
		ptod_reply(c, 0, NULL);
}

/* The online cores' executor (from the device's own table), or 0. */
static pid_t executor_pid(struct pto_udev *u)
{
	uint32_t i;

	for (i = 0; i < u->info.nr_cores; i++)
		if (reg_load_acquire(&pto_regs_core(u->regs, i)->state) ==
		    PTO_CORE_ONLINE)
			return atomic_load(&u->sh->owner[i]);
	return 0;
}

/* DEV_STATUS: pto.ko's sysfs counters, then the register file. */
static void dev_status(struct client *c)
{
	struct pto_udev *u = U(c->d);
	struct pto_udev_gm_stats st;
	uint32_t i, online = 0, dead = 0;
	struct pto_msg r;
	char path[64];
	int fd;

	pto_udev_gm_stats(c->d->udev->gm, &st);
	for (i = 0; i < u->info.nr_cores; i++) {
		uint32_t s = reg_load_acquire(&pto_regs_core(u->regs, i)->state);

		online += s == PTO_CORE_ONLINE;
		dead += s == PTO_CORE_DEAD;
	}
	empty_reply(&r, 0);
	snprintf(r.text, sizeof(r.text),
		 "gm_bytes_used %" PRIu64 "\ngm_buffers %" PRIu64 "\nallocs %" PRIu64 "\nfrees %" PRIu64 "\nparks %" PRIu64 "\nkicks %" PRIu64 "\nwakes %" PRIu64 "\nirqs %" PRIu64 "\npins %" PRIu64 "\ncores_online %u\ncores_dead %u\naicpu %u\nexecutor_pid %d\n",
		 st.bytes_used, st.buffers, st.allocs, st.frees,
		 atomic_load(&u->sh->parks), atomic_load(&u->sh->kicks),
		 atomic_load(&u->sh->wakes), atomic_load(&u->sh->irqs), st.pins,
		 online,
		 dead, reg_load_acquire(&pto_regs_info(u->regs)->aicpu_attached),
		 (int)executor_pid(u));
	/* a read-only file of the register memfd */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", u->regs_fd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ptod_send_fds(c, &r, &fd, fd >= 0);
	if (fd >= 0)
		close(fd);
}

/* HWS_CONFIG: read, or validate and write as pto.ko's ioctl does. */
static void hws_config(struct client *c, struct pto_msg *m)
{
	struct ptod *d = c->d;
	struct pto_regs_hws *hws = pto_regs_hws(d->regs);
	struct pto_msg r;

	if (m->u.hws.flags & ~PTO_HWS_CONFIG_SET || m->u.hws.pad) {
		ptod_reply(c, -EINVAL, "HWS_CONFIG: unknown flags");
		return;
	}
	if (m->u.hws.flags & PTO_HWS_CONFIG_SET) {
		if (pto_hws_cfg_check(&m->u.hws.cfg, d->info.nr_cores)) {
			ptod_reply(c, -EINVAL,
				   "HWS_CONFIG: a register out of its range (Documentation/kmod.rst)");
			return;
		}
		pto_hws_cfg_write(hws, &m->u.hws.cfg);
		pto2_engine_load_regs(d->engine);
	}
	empty_reply(&r, 0);
	pto_hws_cfg_read(hws, &r.u.hws.cfg);
	ptod_send(c, &r);
}

static void udev_message(struct client *c, struct pto_msg *m)
{
	switch (m->type) {
	case PTO_MSG_DEV_OPEN:
		dev_open(c);
		break;
	case PTO_MSG_GM_ALLOC:
		gm_alloc(c, m);
		break;
	case PTO_MSG_GM_FREE:
		gm_free(c, m);
		break;
	case PTO_MSG_DEV_STATUS:
		dev_status(c);
		break;
	default:
		hws_config(c, m);
		break;
	}
}

const struct ptod_dev_ops ptod_udev_ops = {
	.name = "user-mode",
	.open = udev_open,
	.close = udev_close,
	.gm_alloc = udev_gm_alloc,
	.gm_free = udev_gm_free,
	.client_file = udev_client_file,
	.client_release = udev_client_release,
	.pin = udev_pin,
	.unpin = udev_unpin,
	.exec_gone = udev_exec_gone,
	.message = udev_message,
	.peer_ok = udev_peer_ok,
};
