// SPDX-License-Identifier: GPL-2.0
/*
 * qtraffic - the VM's traffic tool (static, no libraries): UDP and TCP with
 * a chosen ToS byte, so packets reach the qdisc classes under test.
 *
 *	qtraffic udp-send DST PORT COUNT SIZE TOS	prints "sent N enobufs M"
 *	qtraffic udp-sink PORT SECONDS			prints "received N"
 *	qtraffic tcp-send DST PORT BYTES TOS		prints "sent N"
 *	qtraffic tcp-sink PORT				prints "received N" (one connection)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static struct sockaddr_in addr(const char *ip, const char *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(atoi(port)) };

	if (ip && inet_pton(AF_INET, ip, &a.sin_addr) != 1)
		die("address");
	return a;
}

static void set_tos(int fd, const char *tos)
{
	int t = (int)strtol(tos, NULL, 0);

	if (setsockopt(fd, IPPROTO_IP, IP_TOS, &t, sizeof(t)))
		die("IP_TOS");
}

static int udp_send(char **a)
{
	struct sockaddr_in dst = addr(a[0], a[1]);
	long count = atol(a[2]), size = atol(a[3]), i, sent = 0, enobufs = 0;
	static char buf[65536];
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0)
		die("socket");
	set_tos(fd, a[4]);
	for (i = 0; i < count; i++) {
		if (sendto(fd, buf, size, 0, (struct sockaddr *)&dst, sizeof(dst)) >= 0)
			sent++;
		else if (errno == ENOBUFS)	/* the qdisc dropped it */
			enobufs++;
		else
			die("sendto");
	}
	printf("sent %ld enobufs %ld\n", sent, enobufs);
	return 0;
}

static int udp_sink(char **a)
{
	struct sockaddr_in me = addr(NULL, a[0]);
	int fd = socket(AF_INET, SOCK_DGRAM, 0), secs = atoi(a[1]);
	static char buf[65536];
	long n = 0;
	time_t end = time(NULL) + secs;

	if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof(me)))
		die("bind");
	while (time(NULL) < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 200) > 0 && recv(fd, buf, sizeof(buf), 0) >= 0)
			n++;
	}
	printf("received %ld\n", n);
	return 0;
}

static int tcp_send(char **a)
{
	struct sockaddr_in dst = addr(a[0], a[1]);
	long bytes = atol(a[2]), sent = 0;
	static char buf[16384];
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		die("socket");
	set_tos(fd, a[3]);
	if (connect(fd, (struct sockaddr *)&dst, sizeof(dst)))
		die("connect");
	while (sent < bytes) {
		long n = bytes - sent < (long)sizeof(buf) ? bytes - sent : (long)sizeof(buf);
		ssize_t w = write(fd, buf, n);

		if (w < 0)
			die("write");
		sent += w;
	}
	close(fd);
	printf("sent %ld\n", sent);
	return 0;
}

static int tcp_sink(char **a)
{
	struct sockaddr_in me = addr(NULL, a[0]);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0), c;
	static char buf[65536];
	long n = 0;
	ssize_t r;

	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&me, sizeof(me)) || listen(fd, 4))
		die("bind/listen");
	c = accept(fd, NULL, NULL);
	if (c < 0)
		die("accept");
	while ((r = read(c, buf, sizeof(buf))) > 0)
		n += r;
	printf("received %ld\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 7 && !strcmp(argv[1], "udp-send"))
		return udp_send(argv + 2);
	if (argc == 4 && !strcmp(argv[1], "udp-sink"))
		return udp_sink(argv + 2);
	if (argc == 6 && !strcmp(argv[1], "tcp-send"))
		return tcp_send(argv + 2);
	if (argc == 3 && !strcmp(argv[1], "tcp-sink"))
		return tcp_sink(argv + 2);
	fprintf(stderr, "usage: qtraffic udp-send DST PORT COUNT SIZE TOS | udp-sink PORT SECONDS |\n"
		"                tcp-send DST PORT BYTES TOS | tcp-sink PORT\n");
	return 2;
}
