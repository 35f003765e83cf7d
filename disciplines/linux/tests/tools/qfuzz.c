// SPDX-License-Identifier: GPL-2.0
/*
 * qfuzz - random and malformed TCA_OPTIONS for a qdisc, over raw rtnetlink.
 *
 *	qfuzz DEV KIND MAXATTR N SEED [DISC...]
 *	qfuzz DEV KIND set ATTR u8|u32|u64|len:N VALUE
 *	qfuzz DEV qlab pset DISC|- [ATTR u8|u32|u64|len:N VALUE]
 *
 * The second form sends one `change` with one attribute (len:N: N bytes
 * of VALUE) and prints "error E: MESSAGE" from the kernel's extended ack
 * ("error 0: " on success): for checks of the netlink policy itself,
 * which tc's own parsing never lets through.  The third does the same for
 * the generic qdisc: TCA_QLAB_DISC (unless -) and, if given, one attribute
 * in TCA_QLAB_PARAMS.
 *
 * N requests against the root qdisc of DEV (which must be KIND): mostly
 * `change` with a random option set, every 25th a delete and re-add with
 * one.  Option sets mix well-typed attributes (right size, boundary or
 * random values), wrong sizes, unknown types, nested flags, truncated and
 * overlong headers, random bytes.  With DISC names (the generic qdisc
 * qlab), a set also names one of them (or a garbage name) as TCA_QLAB_DISC
 * and carries random parameters in TCA_QLAB_PARAMS; a re-add that fails
 * falls back to the first DISC.  The kernel must answer every request
 * (an ack, success or error); prints "requests N ok A rejected R" and
 * exits 1 if a request got no answer or nothing was ever accepted or
 * rejected (the fuzz would not reach both paths).
 */
#include <errno.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static uint64_t rng;

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t boundary(void)
{
	static const uint64_t v[] = { 0, 1, 2, 3, 7, 8, 9, 100, 255, 256, 1000, 65535, 65536,
				      999999, 1000000, 1000001, 0x7fffffff, 0xffffffff,
				      0x100000000ULL, 100000000000ULL, 1000000000000ULL,
				      ~0ULL };

	return rnd() % 3 ? v[rnd() % (sizeof(v) / sizeof(v[0]))] : rnd() >> (rnd() % 64);
}

struct req {
	struct nlmsghdr n;
	struct tcmsg t;
	char buf[4096];
};

static void put(struct req *r, int type, const void *data, int len)
{
	struct rtattr *a = (struct rtattr *)((char *)r + NLMSG_ALIGN(r->n.nlmsg_len));

	a->rta_type = type;
	a->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	r->n.nlmsg_len = NLMSG_ALIGN(r->n.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* n random attributes (types 1..maxattr mostly) at the end of r. */
static void random_attrs(struct req *r, int maxattr, int n)
{
	unsigned char data[64];
	int i;

	for (i = 0; i < n; i++) {
		int type = rnd() % 5 ? 1 + rnd() % maxattr : rnd() % 64;
		int len, j;
		uint64_t v = boundary();

		switch (rnd() % 8) {
		case 0: len = 1; break;
		case 1: len = 4; break;
		case 2: len = 8; break;
		case 3: len = 4 * (1 + rnd() % 9); break;	/* lists, one too many */
		case 4: len = 0; break;
		default: len = rnd() % 40; break;
		}
		memcpy(data, &v, sizeof(v));
		for (j = 8; j < len; j++)
			data[j] = rnd() % 3 ? (unsigned char)boundary() : 0;
		if (len == 4 && rnd() % 2) {
			uint32_t v32 = (uint32_t)v;

			memcpy(data, &v32, 4);
		}
		if (rnd() % 20 == 0)
			type |= NLA_F_NESTED;
		put(r, type, data, len);
	}
}

/* The generic qdisc's attributes (qlab_sched.h; not included: a test of it). */
enum { QLAB_DISC = 2, QLAB_SEED = 3, QLAB_PARAMS = 4, QLAB_MAXPARAMS = 16 };
static char **discs;
static int ndiscs;

static void put_disc(struct req *r, const char *name)
{
	put(r, QLAB_DISC, name, strlen(name) + 1);
}

/* A random option set inside TCA_OPTIONS. */
static void options(struct req *r, int maxattr)
{
	struct rtattr *nest = (struct rtattr *)((char *)r + NLMSG_ALIGN(r->n.nlmsg_len));
	int n = rnd() % 8;

	put(r, TCA_OPTIONS, NULL, 0);
	if (ndiscs) {
		if (rnd() % 4) {
			static const char *const bad[] = { "", "nosuch", "NCQ", "droptail2",
				"0123456789012345678901234567890123456789" };

			put_disc(r, rnd() % 8 ? discs[rnd() % ndiscs] : bad[rnd() % 5]);
		}
		if (rnd() % 4) {
			struct rtattr *params = (struct rtattr *)((char *)r + NLMSG_ALIGN(r->n.nlmsg_len));

			put(r, QLAB_PARAMS, NULL, 0);
			random_attrs(r, QLAB_MAXPARAMS, rnd() % 8);
			params->rta_len = (char *)r + r->n.nlmsg_len - (char *)params;
		}
		n = rnd() % 3;
	}
	random_attrs(r, maxattr, n);
	nest->rta_len = (char *)r + r->n.nlmsg_len - (char *)nest;
	/* Malformed: a header claiming more (or less) than there is. */
	if (rnd() % 15 == 0 && n) {
		struct rtattr *last = (struct rtattr *)((char *)nest + RTA_LENGTH(0));

		last->rta_len = rnd() % 2 ? 3 : 4000;
	}
}

static char ack_msg[512];

static int talk(int fd, struct req *r)
{
	char buf[8192];
	struct nlmsghdr *h;
	struct nlattr *a;
	ssize_t n;
	int left;

	ack_msg[0] = '\0';
	if (send(fd, r, r->n.nlmsg_len, 0) < 0)
		return -1000;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < (ssize_t)sizeof(*h))
		return -1000;
	h = (struct nlmsghdr *)buf;
	if (h->nlmsg_type != NLMSG_ERROR)
		return -1000;
	/* NETLINK_CAP_ACK: the TLVs follow the bare nlmsgerr. */
	a = (struct nlattr *)((char *)NLMSG_DATA(h) + sizeof(struct nlmsgerr));
	left = (char *)h + h->nlmsg_len - (char *)a;
	while ((h->nlmsg_flags & NLM_F_ACK_TLVS) && left >= (int)sizeof(*a) &&
	       a->nla_len >= sizeof(*a) && a->nla_len <= left) {
		if (a->nla_type == NLMSGERR_ATTR_MSG)
			snprintf(ack_msg, sizeof(ack_msg), "%.*s",
				 (int)(a->nla_len - sizeof(*a)), (char *)(a + 1));
		left -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
	return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
}

static void build(struct req *r, int type, int flags, int ifindex, const char *kind, int maxattr, int opts)
{
	static unsigned int seq;

	memset(r, 0, sizeof(*r));
	r->n.nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg));
	r->n.nlmsg_type = type;
	r->n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	r->n.nlmsg_seq = ++seq;
	r->t.tcm_family = AF_UNSPEC;
	r->t.tcm_ifindex = ifindex;
	r->t.tcm_parent = TC_H_ROOT;
	/* Changes name the root qdisc (handle 0); creates give it a handle. */
	r->t.tcm_handle = flags & NLM_F_CREATE ? 0x10000 : 0;
	put(r, TCA_KIND, kind, strlen(kind) + 1);
	if (opts)
		options(r, maxattr);
}

int main(int argc, char **argv)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	long n, i, ok = 0, rejected = 0, lost = 0;
	int fd, ifindex, maxattr, err;
	struct req r;

	if ((argc == 7 && !strcmp(argv[3], "set")) ||
	    ((argc == 5 || argc == 8) && !strcmp(argv[3], "pset"))) {
		int pset = !strcmp(argv[3], "pset"), one = 1, attr = 0, len = 0;
		uint64_t v = 0;
		unsigned char data[64] = { 0 };
		struct rtattr *nest, *params;
		const char *type = "u8";

		if (argc >= 7) {
			attr = atoi(argv[argc - 3]);
			type = argv[argc - 2];
			v = strtoull(argv[argc - 1], NULL, 0);
		}

		fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
		ifindex = if_nametoindex(argv[1]);
		if (fd < 0 || !ifindex || bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
			return 1;
		setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
		setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
		if (!strcmp(type, "u8"))
			len = 1;
		else if (!strcmp(type, "u32"))
			len = 4;
		else if (!strcmp(type, "u64"))
			len = 8;
		else
			len = atoi(type + 4) % 64;
		if (len == 4) {
			uint32_t v32 = (uint32_t)v;

			memcpy(data, &v32, 4);
		} else {
			memcpy(data, &v, len < 8 ? len : 8);
		}
		build(&r, RTM_NEWQDISC, 0, ifindex, argv[2], 0, 0);
		nest = (struct rtattr *)((char *)&r + NLMSG_ALIGN(r.n.nlmsg_len));
		put(&r, TCA_OPTIONS, NULL, 0);
		if (!pset) {
			put(&r, attr, data, len);
		} else {
			if (strcmp(argv[4], "-"))
				put_disc(&r, argv[4]);
			if (argc == 8) {
				params = (struct rtattr *)((char *)&r + NLMSG_ALIGN(r.n.nlmsg_len));
				put(&r, QLAB_PARAMS, NULL, 0);
				put(&r, attr, data, len);
				params->rta_len = (char *)&r + r.n.nlmsg_len - (char *)params;
			}
		}
		nest->rta_len = (char *)&r + r.n.nlmsg_len - (char *)nest;
		err = talk(fd, &r);
		printf("error %d: %s\n", err, ack_msg);
		return err == -1000;
	}
	if (argc < 6) {
		fprintf(stderr, "usage: qfuzz DEV KIND MAXATTR N SEED [DISC...]\n");
		return 2;
	}
	discs = argv + 6;
	ndiscs = argc - 6;
	ifindex = if_nametoindex(argv[1]);
	maxattr = atoi(argv[3]);
	n = atol(argv[4]);
	rng = strtoull(argv[5], NULL, 0);
	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	if (!ifindex || fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("qfuzz setup");
		return 1;
	}
	for (i = 0; i < n; i++) {
		if (i % 25 == 24) {
			build(&r, RTM_DELQDISC, 0, ifindex, argv[2], maxattr, 0);
			talk(fd, &r);
			build(&r, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_EXCL, ifindex, argv[2], maxattr, 1);
			err = talk(fd, &r);
			if (err) {	/* keep a qdisc to change: the defaults always work */
				build(&r, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_EXCL, ifindex, argv[2], maxattr, 0);
				if (ndiscs) {
					struct rtattr *nest = (struct rtattr *)((char *)&r +
							NLMSG_ALIGN(r.n.nlmsg_len));

					put(&r, TCA_OPTIONS, NULL, 0);
					put_disc(&r, discs[0]);
					nest->rta_len = (char *)&r + r.n.nlmsg_len - (char *)nest;
				}
				if (talk(fd, &r))
					lost++;
			}
		} else {
			build(&r, RTM_NEWQDISC, 0, ifindex, argv[2], maxattr, 1);
			err = talk(fd, &r);
		}
		if (err == -1000)
			lost++;
		else if (err)
			rejected++;
		else
			ok++;
	}
	printf("requests %ld ok %ld rejected %ld lost %ld\n", n, ok, rejected, lost);
	return lost || !ok || !rejected;
}
