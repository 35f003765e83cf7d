// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * replay.c - qcore-replay, the conformance adapter: events in, decisions
 * out (DISCIPLINES.md, "One conformance interface").  Every other backend
 * must produce the same decision rows for the same events, parameters and
 * seed, so this tool stays a literal reading of that contract.
 *
 *	qcore-replay DISC [--param NAME=VALUE]... [--seed N] < events.csv > decisions.csv
 *
 * Unlike the disciplines, the replay is an ordinary program: it allocates
 * its queues and reports bad input with exit status 2.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdlib.h>
#include "qcore.h"
#include "qcore_usage.h"

/* A seam for tests: look up extra test-only disciplines too. */
#ifndef QCORE_REPLAY_FIND
#define QCORE_REPLAY_FIND qcore_find
#endif
const struct qcore_disc_ops *QCORE_REPLAY_FIND(const char *name);

#define EXIT_USAGE 2		/* bad arguments or bad events */
#define EXIT_CONTRACT 3		/* a discipline broke the qcore contract */

static const char events_header[] = "t_ns,op,len,cls,prec,flow";
static const char decisions_header[] = "t_ns,op,pkt,verdict,band,reason";

/* A queued packet as the adapter holds it. */
struct replay_pkt {
	u64 id;
	u64 arrival_ns;
	u32 len;
};

/* Growable ring buffer: one FIFO per band. */
struct fifo {
	struct replay_pkt *buf;
	size_t cap, head, n;
	u64 bytes;
};

struct replay {
	const struct qcore_disc_ops *ops;
	void *params, *vars, *stats;
	u32 nbands;
	struct fifo fifo[QCORE_MAX_BANDS];
	struct qcore_rng rng;
	u64 next_pkt;		/* pkt number of the next enq row */
	u64 queued;		/* packets in all FIFOs */
	u64 row;		/* current data row, 1-based */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: qcore-replay DISC [--param NAME=VALUE]... [--seed N] < events.csv > decisions.csv\n"
		"       qcore-replay DISC --help    parameters of DISC\n"
		"       qcore-replay --list         known disciplines\n"
		"       qcore-replay --describe     every discipline and parameter as JSON\n"
		"\n"
		"events.csv:    header %s; op enq|deq; on deq rows the other fields are empty;\n"
		"               empty cls/prec/flow on enq rows mean 0; times never decrease\n"
		"decisions.csv: header %s; one row per event row;\n"
		"               enq: queued|marked|dropped, the classified band, the drop reason;\n"
		"               deq: sent with pkt and band, or -1,empty; head drops precede\n"
		"               their deq row as drop_head,PKT,dropped,BAND,REASON\n"
		"--seed N       seed of the core's SplitMix64 generator (default 1)\n"
		"exit status:   0 ok, 2 bad arguments or events, 3 discipline broke the contract\n",
		events_header, decisions_header);
}

static void __attribute__((noreturn, format(printf, 2, 3)))
die(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("qcore-replay: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

static void __attribute__((noreturn, format(printf, 2, 3)))
die_row(const struct replay *r, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "qcore-replay: row %llu (line %llu): ",
		(unsigned long long)r->row, (unsigned long long)r->row + 1);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_USAGE);
}

/* Decimal digits only, at most max; -1 on anything else. */
static int parse_u64(const char *s, u64 max, u64 *out)
{
	u64 v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (max - (u64)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (u64)(*s - '0');
	}
	*out = v;
	return 0;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die(1, "out of memory");
	return p;
}

static void fifo_push(struct fifo *f, const struct replay_pkt *p)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		struct replay_pkt *buf = xcalloc(cap, sizeof(*buf));
		size_t i;

		for (i = 0; i < f->n; i++)
			buf[i] = f->buf[(f->head + i) % f->cap];
		free(f->buf);
		f->buf = buf;
		f->cap = cap;
		f->head = 0;
	}
	f->buf[(f->head + f->n) % f->cap] = *p;
	f->n++;
	f->bytes += p->len;
}

static struct replay_pkt fifo_pop(struct fifo *f)
{
	struct replay_pkt p = f->buf[f->head];

	f->head = (f->head + 1) % f->cap;
	f->n--;
	f->bytes -= p.len;
	return p;
}

static void build_views(const struct replay *r, struct qcore_band_view *v)
{
	u32 b;

	memset(v, 0, sizeof(*v) * QCORE_MAX_BANDS);
	for (b = 0; b < r->nbands; b++) {
		const struct fifo *f = &r->fifo[b];

		v[b].backlog_pkts = (u32)f->n;
		v[b].backlog_bytes = f->bytes;
		if (f->n) {
			v[b].head_len = f->buf[f->head].len;
			v[b].head_arrival_ns = f->buf[f->head].arrival_ns;
		}
	}
}

static void do_enqueue(struct replay *r, const struct qcore_pkt *pkt)
{
	struct qcore_band_view v[QCORE_MAX_BANDS];
	struct qcore_decision d;
	static const char *const verdicts[] = { "queued", "marked", "dropped" };
	u64 id = r->next_pkt++;

	build_views(r, v);
	d = r->ops->enqueue(r->params, r->vars, r->stats, pkt, v, &r->rng);
	if (d.verdict > QCORE_DROP || d.band >= r->nbands ||
	    d.reason >= QCORE_REASON__COUNT ||
	    (d.verdict == QCORE_DROP) != (d.reason != QCORE_REASON_NONE))
		die(EXIT_CONTRACT, "row %llu: %s returned an invalid enqueue decision (verdict %u, band %u, reason %u)",
		    (unsigned long long)r->row, r->ops->name, d.verdict, d.band, d.reason);
	if (d.verdict != QCORE_DROP) {
		struct replay_pkt p = { id, pkt->now_ns, pkt->len };

		fifo_push(&r->fifo[d.band], &p);
		r->queued++;
	}
	printf("%llu,enq,%llu,%s,%u,%s\n", (unsigned long long)pkt->now_ns,
	       (unsigned long long)id, verdicts[d.verdict], d.band,
	       qcore_reason_names[d.reason]);
}

/* Take the head of band and tell the discipline; returns the packet. */
static struct replay_pkt take_head(struct replay *r, const struct qcore_deq *d,
				   u64 now_ns)
{
	struct qcore_band_view v[QCORE_MAX_BANDS];
	struct replay_pkt p;

	if (d->band >= r->nbands || !r->fifo[d->band].n)
		die(EXIT_CONTRACT, "row %llu: %s chose band %u, which is empty or does not exist",
		    (unsigned long long)r->row, r->ops->name, d->band);
	p = fifo_pop(&r->fifo[d->band]);
	r->queued--;
	build_views(r, v);
	r->ops->dequeued(r->params, r->vars, r->stats, d->band, p.len, now_ns, v);
	return p;
}

/*
 * One deq row: any number of head drops (each its own drop_head row), then
 * sent or empty.  Each head drop removes a packet, so queued + 1 rounds
 * always suffice; more means the discipline loops.
 */
static void do_dequeue(struct replay *r, u64 now_ns)
{
	struct qcore_band_view v[QCORE_MAX_BANDS];
	unsigned long long t = now_ns;
	u64 round, rounds = r->queued + 1;
	struct replay_pkt p;
	struct qcore_deq d;

	for (round = 0; round < rounds; round++) {
		build_views(r, v);
		d = r->ops->dequeue(r->params, r->vars, v, now_ns);
		switch (d.action) {
		case QCORE_DEQ_EMPTY:
			printf("%llu,deq,-1,empty,,\n", t);
			return;
		case QCORE_DEQ_SERVE:
			p = take_head(r, &d, now_ns);
			printf("%llu,deq,%llu,sent,%u,\n", t,
			       (unsigned long long)p.id, d.band);
			return;
		case QCORE_DEQ_DROP_HEAD:
			if (d.reason == QCORE_REASON_NONE || d.reason >= QCORE_REASON__COUNT)
				die(EXIT_CONTRACT, "row %llu: %s head drop without a valid reason (%u)",
				    (unsigned long long)r->row, r->ops->name, d.reason);
			p = take_head(r, &d, now_ns);
			printf("%llu,drop_head,%llu,dropped,%u,%s\n", t,
			       (unsigned long long)p.id, d.band,
			       qcore_reason_names[d.reason]);
			break;
		default:
			die(EXIT_CONTRACT, "row %llu: %s returned dequeue action %u",
			    (unsigned long long)r->row, r->ops->name, d.action);
		}
	}
	die(EXIT_CONTRACT, "row %llu: %s kept dropping heads of empty queues",
	    (unsigned long long)r->row, r->ops->name);
}

/* Split line into exactly ncol comma-separated fields, in place. */
static int split(char *line, char **col, int ncol)
{
	int n = 0;

	col[n++] = line;
	for (; *line; line++) {
		if (*line != ',')
			continue;
		if (n == ncol)
			return -1;
		*line = '\0';
		col[n++] = line + 1;
	}
	return n == ncol ? 0 : -1;
}

/* An enq row's optional column: empty means 0. */
static u64 opt_field(const struct replay *r, const char *s, const char *name,
		     u64 max)
{
	u64 v = 0;

	if (*s && parse_u64(s, max, &v))
		die_row(r, "column %s: expected empty or an integer 0..%llu, got '%s'",
			name, (unsigned long long)max, s);
	return v;
}

static void parse_enq(const struct replay *r, char **col, struct qcore_pkt *pkt)
{
	char err[QCORE_ERRLEN];
	u64 len;

	if (parse_u64(col[2], 65535, &len) || len == 0)
		die_row(r, "column len: expected an integer 1..65535 (IP bytes), got '%s'",
			col[2]);
	pkt->len = (u32)len;
	pkt->cls = (u8)opt_field(r, col[3], "cls", 255);
	pkt->prec = (u8)opt_field(r, col[4], "prec", 255);
	pkt->flow_hash = (u32)opt_field(r, col[5], "flow", UINT32_MAX);
	pkt->flags = 0;		/* events carry no flags */
	if (r->ops->check_pkt &&
	    r->ops->check_pkt(r->params, pkt, err, sizeof(err)))
		die_row(r, "column %s", err);
}

static void check_deq(const struct replay *r, char **col)
{
	static const char *const names[] = { "len", "cls", "prec", "flow" };
	int i;

	for (i = 0; i < 4; i++)
		if (*col[i + 2])
			die_row(r, "column %s: must be empty on a deq row, got '%s'",
				names[i], col[i + 2]);
}

static void chomp(char *line)
{
	size_t n = strlen(line);

	if (n && line[n - 1] == '\n')
		line[--n] = '\0';
	if (n && line[n - 1] == '\r')
		line[--n] = '\0';
}

static void run(struct replay *r, FILE *in)
{
	char *line = NULL, *col[6];
	size_t cap = 0;
	u64 t, last_t = 0;

	if (getline(&line, &cap, in) < 0)
		die(EXIT_USAGE, "line 1: missing header %s", events_header);
	chomp(line);
	if (strcmp(line, events_header))
		die(EXIT_USAGE, "line 1: header must be exactly %s, got '%s'",
		    events_header, line);
	printf("%s\n", decisions_header);

	while (getline(&line, &cap, in) >= 0) {
		struct qcore_pkt pkt;

		r->row++;
		chomp(line);
		if (split(line, col, 6))
			die_row(r, "expected 6 columns (%s)", events_header);
		if (parse_u64(col[0], UINT64_MAX, &t))
			die_row(r, "column t_ns: expected an integer, got '%s'", col[0]);
		if (t < last_t)
			die_row(r, "column t_ns: %llu is before the previous row's %llu (times never decrease)",
				(unsigned long long)t, (unsigned long long)last_t);
		last_t = t;
		if (strcmp(col[1], "enq") == 0) {
			memset(&pkt, 0, sizeof(pkt));
			pkt.now_ns = t;
			parse_enq(r, col, &pkt);
			do_enqueue(r, &pkt);
		} else if (strcmp(col[1], "deq") == 0) {
			check_deq(r, col);
			do_dequeue(r, t);
		} else {
			die_row(r, "column op: expected enq or deq, got '%s'", col[1]);
		}
	}
	if (ferror(in))
		die(1, "reading events: read error");
	free(line);
}

static void list(void)
{
	u32 i;

	for (i = 0; qcore_disciplines[i]; i++)
		printf("%s\n", qcore_disciplines[i]->name);
}

static void disc_help(const struct qcore_disc_ops *ops)
{
	printf("%s: %s\n", ops->name, ops->summary);
	printf("%s\n", ops->bands_help ? ops->bands_help : "bands: see the discipline's header");
	qcore_params_usage(ops, stdout);
}

/* --param NAME=VALUE into the params struct. */
/* One --param NAME=VALUE as a typed value (the core's parser). */
static void parse_param(const struct replay *r, const char *arg, struct qcore_param_value *v)
{
	char err[QCORE_ERRLEN + 200];
	const char *eq = strchr(arg, '=');
	char name[64];
	size_t nlen;
	int i;

	if (!eq || eq == arg)
		die(EXIT_USAGE, "--param: expected NAME=VALUE, got '%s'", arg);
	nlen = (size_t)(eq - arg);
	if (nlen >= sizeof(name))
		die(EXIT_USAGE, "--param: name too long in '%s'", arg);
	memcpy(name, arg, nlen);
	name[nlen] = '\0';
	memset(v, 0, sizeof(*v));
	i = qcore_param_index(r->ops, name, err, sizeof(err));
	if (i < 0 || qcore_param_parse(&r->ops->params[i], eq + 1, v, err, sizeof(err)))
		die(EXIT_USAGE, "--param: %s", err);
	v->index = (u32)i;
}

static void setup(struct replay *r, const char *disc, const char **param_args,
		  int nparam_args, u64 seed)
{
	char err[QCORE_ERRLEN + 200];
	struct qcore_param_value *values;
	int i;

	r->ops = QCORE_REPLAY_FIND(disc);
	if (!r->ops)
		die(EXIT_USAGE, "unknown discipline '%s' (qcore-replay --list)", disc);
	r->params = xcalloc(1, r->ops->params_size);
	r->vars = xcalloc(1, r->ops->vars_size);
	r->stats = xcalloc(1, r->ops->stats_size);
	/* A default its own table rejects is the discipline's fault, not the user's. */
	if (qcore_params_defaults(r->ops, r->params, err, sizeof(err)))
		die(EXIT_CONTRACT, "%s: bad default: %s", disc, err);
	values = xcalloc((size_t)nparam_args, sizeof(*values));
	for (i = 0; i < nparam_args; i++)
		parse_param(r, param_args[i], &values[i]);
	if (qcore_configure(r->ops, r->params, values, (u32)nparam_args, &r->nbands,
			    err, sizeof(err))) {
		char scratch[QCORE_ERRLEN];

		/* The values were parsed (range-checked) already: a failure with
		 * check_params passing is a band count out of range, the
		 * discipline's fault. */
		die(r->ops->check_params(r->params, scratch, sizeof(scratch)) ? EXIT_USAGE : EXIT_CONTRACT,
		    "%s: %s", disc, err);
	}
	free(values);
	r->ops->reset(r->params, r->vars);
	qcore_rng_seed(&r->rng, seed);
}

static void teardown(struct replay *r)
{
	u32 b;

	for (b = 0; b < QCORE_MAX_BANDS; b++)
		free(r->fifo[b].buf);
	free(r->params);
	free(r->vars);
	free(r->stats);
}

/* A JSON string (the tables hold printable ASCII; escape what JSON needs). */
static void json_str(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

/*
 * The registry as JSON, for qlab's Python side (the job schema's parameter
 * definitions and the scenario's discipline kinds are generated from it):
 * {"max_bands", "reasons", "disciplines": [{"name", "summary", "bands_help",
 * "ignores": ["time", "flow_hash", "dequeued"], "params": [{"name", "kind"
 * (u32|u64|ppm|enum|bool|u32_list), "min", "max" (ppm for ppm), "default",
 * "unit", "choices" (enum: a list, else null), "help"}]}]}.
 */
static void describe(void)
{
	static const char *const kinds[] = {
		[QCORE_PARAM_U32] = "u32", [QCORE_PARAM_U64] = "u64",
		[QCORE_PARAM_PPM] = "ppm", [QCORE_PARAM_ENUM] = "enum",
		[QCORE_PARAM_BOOL] = "bool", [QCORE_PARAM_U32_LIST] = "u32_list",
	};
	u32 i, j;

	printf("{\"max_bands\": %d, \"reasons\": [", QCORE_MAX_BANDS);
	for (i = 1; i < QCORE_REASON__COUNT; i++) {
		printf(i > 1 ? ", " : "");
		json_str(qcore_reason_names[i]);
	}
	printf("],\n \"disciplines\": [");
	for (i = 0; qcore_disciplines[i]; i++) {
		const struct qcore_disc_ops *ops = qcore_disciplines[i];
		u8 ig = ops->ignores;

		printf("%s\n  {\"name\": ", i ? "," : "");
		json_str(ops->name);
		printf(", \"summary\": ");
		json_str(ops->summary);
		printf(", \"bands_help\": ");
		json_str(ops->bands_help);
		printf(", \"ignores\": [%s%s%s%s%s]",
		       ig & QCORE_IGNORES_TIME ? "\"time\"" : "",
		       ig & QCORE_IGNORES_TIME && ig & (QCORE_IGNORES_FLOW_HASH | QCORE_IGNORES_DEQUEUED) ? ", " : "",
		       ig & QCORE_IGNORES_FLOW_HASH ? "\"flow_hash\"" : "",
		       ig & QCORE_IGNORES_FLOW_HASH && ig & QCORE_IGNORES_DEQUEUED ? ", " : "",
		       ig & QCORE_IGNORES_DEQUEUED ? "\"dequeued\"" : "");
		printf(", \"params\": [");
		for (j = 0; j < ops->nparams; j++) {
			const struct qcore_param_desc *d = &ops->params[j];

			printf("%s\n   {\"name\": ", j ? "," : "");
			json_str(d->name);
			printf(", \"kind\": \"%s\", \"min\": %llu, \"max\": %llu, \"default\": ",
			       kinds[d->kind], (unsigned long long)d->min, (unsigned long long)d->max);
			json_str(d->dflt);
			printf(", \"unit\": ");
			json_str(d->unit);
			printf(", \"choices\": ");
			if (d->kind == QCORE_PARAM_ENUM) {
				const char *c = d->choices;

				printf("[\"");
				for (; *c; c++) {
					if (*c == '|')
						printf("\", \"");
					else
						putchar(*c);
				}
				printf("\"]");
			} else {
				printf("null");
			}
			printf(", \"help\": ");
			json_str(d->help);
			putchar('}');
		}
		printf("]}");
	}
	printf("\n ]}\n");
}

int main(int argc, char **argv)
{
	const char **param_args = xcalloc((size_t)argc, sizeof(*param_args));
	const char *disc = NULL;
	int i, nparam_args = 0, help = 0;
	struct replay r;
	u64 seed = 1;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			help = 1;
		} else if (!strcmp(a, "--list")) {
			list();
			return 0;
		} else if (!strcmp(a, "--describe")) {
			describe();
			return 0;
		} else if (!strcmp(a, "--param") || !strcmp(a, "--seed")) {
			if (i + 1 == argc)
				die(EXIT_USAGE, "%s needs a value", a);
			if (a[2] == 'p')
				param_args[nparam_args++] = argv[++i];
			else if (parse_u64(argv[++i], UINT64_MAX, &seed))
				die(EXIT_USAGE, "--seed: expected an integer 0..%llu, got '%s'",
				    (unsigned long long)UINT64_MAX, argv[i]);
		} else if (a[0] == '-') {
			die(EXIT_USAGE, "unknown option '%s' (qcore-replay --help)", a);
		} else if (disc) {
			die(EXIT_USAGE, "unexpected argument '%s' (one discipline only)", a);
		} else {
			disc = a;
		}
	}
	if (help && !disc) {
		usage(stdout);
		return 0;
	}
	if (!disc)
		die(EXIT_USAGE, "missing discipline (qcore-replay --help, --list)");
	memset(&r, 0, sizeof(r));
	if (help) {
		r.ops = QCORE_REPLAY_FIND(disc);
		if (!r.ops)
			die(EXIT_USAGE, "unknown discipline '%s' (qcore-replay --list)", disc);
		disc_help(r.ops);
		return 0;
	}
	setup(&r, disc, param_args, nparam_args, seed);
	run(&r, stdin);
	if (fflush(stdout) || ferror(stdout))
		die(1, "writing decisions: write error");
	teardown(&r);
	free(param_args);
	return 0;
}
