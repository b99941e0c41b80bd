/* tokenwire-measure-mpi: runs one MPI collective of S bytes R times between barriers and counts the bytes
 * it puts on the wire, on loopback only (issue #10). Launched by tools/measure/tokenwire-measure through
 * mpirun with Open MPI forced onto TCP over `lo`; prints one JSON object per size on rank 0's stdout.
 *
 * Two counts per window:
 *   - TCP payload: every rank sums getsockopt(TCP_INFO) over its TCP sockets (found through /proc/self/fd):
 *     tcpi_bytes_sent (payload octets, RFC 4898), tcpi_data_segs_out (segments with payload) and
 *     tcpi_segs_out (all segments, pure ACKs included). Kernel ≥ 4.19 fills tcpi_bytes_sent.
 *   - The `lo` counters of /proc/net/dev (transmit bytes and packets), read by rank 0: everything the
 *     kernel put on loopback, headers included (and any other traffic on lo, which the driver keeps off).
 * Windows: a baseline of R barriers, then the timed window of R × (collective; barrier); per collective =
 * (timed − baseline) / R, so the barriers' own bytes cancel.
 *
 * Safety: refuses to report (exit 3) when any TCP socket of any rank has a peer outside 127.0.0.0/8 or ::1;
 * sizes are capped at 256 MiB per buffer and repetitions at 100. */
#define _GNU_SOURCE
#include <mpi.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

enum { kMaxSockets = 1024, kMaxSizes = 16, kMaxReps = 100 };
static const uint64_t kMaxBufferBytes = (uint64_t)256 << 20; /* 256 MiB per buffer: 8 ranks × 2 buffers = 4 GiB at most */

/* One socket's cumulative counters; inode identifies it across snapshots. */
typedef struct {
    unsigned long inode;
    uint64_t bytesSent, dataSegments, segments, bytesRetransmitted;
} SocketCount;

typedef struct {
    int count;
    int nonLoopback; /* TCP sockets connected to a peer outside loopback */
    SocketCount sockets[kMaxSockets];
} Snapshot;

/* Whether a connected peer address is loopback (127.0.0.0/8, ::1, or ::ffff:127.x.y.z). */
static int isLoopback(const struct sockaddr_storage* peer)
{
    if (peer->ss_family == AF_INET) {
        const struct sockaddr_in* a = (const struct sockaddr_in*)peer;
        return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    }
    if (peer->ss_family == AF_INET6) {
        const struct sockaddr_in6* a = (const struct sockaddr_in6*)peer;
        if (IN6_IS_ADDR_LOOPBACK(&a->sin6_addr))
            return 1;
        return IN6_IS_ADDR_V4MAPPED(&a->sin6_addr) && a->sin6_addr.s6_addr[12] == 127;
    }
    return 0;
}

/* Every connected TCP socket of this process with its TCP_INFO counters. */
static void snapshot(Snapshot* s)
{
    s->count = 0;
    s->nonLoopback = 0;
    DIR* dir = opendir("/proc/self/fd");
    if (!dir)
        return;
    struct dirent* e;
    while ((e = readdir(dir)) != NULL && s->count < kMaxSockets) {
        if (e->d_name[0] == '.')
            continue;
        const int fd = atoi(e->d_name);
        struct stat st;
        if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
            continue;
        int domain = 0, type = 0, protocol = 0;
        socklen_t len = sizeof domain;
        if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || (domain != AF_INET && domain != AF_INET6))
            continue;
        len = sizeof type;
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM)
            continue;
        len = sizeof protocol;
        if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &len) != 0 || protocol != IPPROTO_TCP)
            continue;
        struct sockaddr_storage peer;
        socklen_t plen = sizeof peer;
        if (getpeername(fd, (struct sockaddr*)&peer, &plen) != 0)
            continue; /* listening or unconnected: sends nothing */
        if (!isLoopback(&peer))
            ++s->nonLoopback;
        struct tcp_info info;
        memset(&info, 0, sizeof info);
        socklen_t ilen = sizeof info;
        if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &ilen) != 0)
            continue;
        SocketCount* c = &s->sockets[s->count++];
        c->inode = (unsigned long)st.st_ino;
        c->bytesSent = info.tcpi_bytes_sent;
        c->dataSegments = info.tcpi_data_segs_out;
        c->segments = info.tcpi_segs_out;
        c->bytesRetransmitted = info.tcpi_bytes_retrans;
    }
    closedir(dir);
}

/* after − before over sockets matched by inode; a socket new in `after` counts from zero. */
static void difference(const Snapshot* before, const Snapshot* after, uint64_t out[4])
{
    out[0] = out[1] = out[2] = out[3] = 0;
    for (int i = 0; i < after->count; ++i) {
        const SocketCount* a = &after->sockets[i];
        SocketCount b = {a->inode, 0, 0, 0, 0};
        for (int j = 0; j < before->count; ++j)
            if (before->sockets[j].inode == a->inode)
                b = before->sockets[j];
        out[0] += a->bytesSent - b.bytesSent;
        out[1] += a->dataSegments - b.dataSegments;
        out[2] += a->segments - b.segments;
        out[3] += a->bytesRetransmitted - b.bytesRetransmitted;
    }
}

/* Transmit bytes and packets of `lo` from /proc/net/dev (0, 0 when unreadable). */
static void loopbackCounters(uint64_t* bytes, uint64_t* packets)
{
    *bytes = *packets = 0;
    FILE* f = fopen("/proc/net/dev", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char name[64];
        unsigned long long v[16];
        if (sscanf(line, " %63[^:]: %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", name, &v[0], &v[1], &v[2], &v[3], &v[4],
                   &v[5], &v[6], &v[7], &v[8], &v[9]) == 11
            && strcmp(name, "lo") == 0) {
            *bytes = v[8];
            *packets = v[9];
        }
    }
    fclose(f);
}

typedef enum { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll } Operation;

static const char* const kOperationNames[] = {"allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall"};

static int parseOperation(const char* s, Operation* op)
{
    const char* const* names = kOperationNames;
    for (int i = 0; i < 6; ++i)
        if (strcmp(s, names[i]) == 0) {
            *op = (Operation)i;
            return 1;
        }
    return 0;
}

/* The collective on float elements (4 B; reductions need an arithmetic type). `elements` is tokenwire's
 * M in elements: the AllReduce buffer, AllGather's output / ReduceScatter's input (N blocks), each rank's
 * All-to-All send buffer (N blocks), the Broadcast / Reduce root buffer. */
static void run(Operation op, float* send, float* recv, int elements, int ranks, MPI_Comm comm)
{
    const int block = elements / ranks;
    switch (op) {
    case AllReduce: MPI_Allreduce(send, recv, elements, MPI_FLOAT, MPI_SUM, comm); break;
    case AllGather: MPI_Allgather(send, block, MPI_FLOAT, recv, block, MPI_FLOAT, comm); break;
    case ReduceScatter: {
        int counts[64];
        for (int i = 0; i < ranks; ++i)
            counts[i] = block;
        MPI_Reduce_scatter(send, recv, counts, MPI_FLOAT, MPI_SUM, comm);
        break;
    }
    case Broadcast: MPI_Bcast(send, elements, MPI_FLOAT, 0, comm); break;
    case Reduce: MPI_Reduce(send, recv, elements, MPI_FLOAT, MPI_SUM, 0, comm); break;
    case AllToAll: MPI_Alltoall(send, block, MPI_FLOAT, recv, block, MPI_FLOAT, comm); break;
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: tokenwire-measure-mpi --op allreduce|allgather|reducescatter|broadcast|reduce|alltoall "
                    "--sizes BYTES[,BYTES…] [--reps R]\n");
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);

    Operation op = AllReduce;
    int haveOp = 0, sizeCount = 0, reps = 3;
    uint64_t sizes[kMaxSizes];
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--op") == 0 && i + 1 < argc) {
            haveOp = parseOperation(argv[++i], &op);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            char* list = argv[++i];
            for (char* t = strtok(list, ","); t && sizeCount < kMaxSizes; t = strtok(NULL, ","))
                sizes[sizeCount++] = strtoull(t, NULL, 10);
        } else {
            haveOp = 0;
            break;
        }
    }
    int bad = !haveOp || sizeCount == 0 || reps < 1 || reps > kMaxReps || ranks > 64;
    for (int i = 0; i < sizeCount; ++i)
        bad |= sizes[i] < (uint64_t)4 * ranks || sizes[i] > kMaxBufferBytes;
    if (bad) {
        if (rank == 0) {
            usage();
            fprintf(stderr, "(sizes 4·N B … 256 MiB, reps 1 … %d, at most 64 ranks)\n", kMaxReps);
        }
        MPI_Finalize();
        return 2;
    }

    static Snapshot a, b, c, d;
    for (int si = 0; si < sizeCount; ++si) {
        /* Whole elements, and for the blocked operations whole blocks of N elements: the bytes actually
         * moved are reported, so the prediction uses them (1 MiB over 3 ranks is 1,048,572 B). */
        int elements = (int)(sizes[si] / 4);
        if (op == AllGather || op == ReduceScatter || op == AllToAll)
            elements -= elements % ranks;
        const size_t bytes = (size_t)elements * 4;
        float* send = malloc(bytes);
        float* recv = malloc(bytes);
        if (!send || !recv) {
            fprintf(stderr, "rank %d: cannot allocate 2 × %zu B\n", rank, bytes);
            MPI_Abort(MPI_COMM_WORLD, 4);
        }
        for (int i = 0; i < elements; ++i)
            send[i] = recv[i] = (float)((rank + i) % 7);

        /* Warm-up: opens every TCP connection the collective uses, so none opens inside a window. */
        run(op, send, recv, elements, ranks, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);

        uint64_t loA[2], loB[2], loC[2], loD[2];
        MPI_Barrier(MPI_COMM_WORLD);
        snapshot(&a);
        loopbackCounters(&loA[0], &loA[1]);
        double t0 = MPI_Wtime();
        for (int r = 0; r < reps; ++r)
            MPI_Barrier(MPI_COMM_WORLD);
        double baselineSeconds = MPI_Wtime() - t0;
        loopbackCounters(&loB[0], &loB[1]);
        snapshot(&b);

        MPI_Barrier(MPI_COMM_WORLD);
        snapshot(&c);
        loopbackCounters(&loC[0], &loC[1]);
        t0 = MPI_Wtime();
        for (int r = 0; r < reps; ++r) {
            run(op, send, recv, elements, ranks, MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        double windowSeconds = MPI_Wtime() - t0;
        loopbackCounters(&loD[0], &loD[1]);
        snapshot(&d);

        /* Per rank, kFields values: baseline (bytes sent, data segments, segments, bytes retransmitted), the
         * window's four, the sockets beyond loopback. */
        enum { kFields = 9 };
        uint64_t mine[kFields], base[4], win[4];
        difference(&a, &b, base);
        difference(&c, &d, win);
        for (int k = 0; k < 4; ++k) {
            mine[k] = base[k];
            mine[4 + k] = win[k];
        }
        mine[8] = (uint64_t)(d.nonLoopback + b.nonLoopback);
        uint64_t all[64 * kFields];
        MPI_Gather(mine, kFields, MPI_UINT64_T, all, kFields, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        double times[2] = {windowSeconds, baselineSeconds}, maxTimes[2];
        MPI_Reduce(times, maxTimes, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        free(send);
        free(recv);

        if (rank == 0) {
            uint64_t nonLoopback = 0;
            for (int r = 0; r < ranks; ++r)
                nonLoopback += all[r * kFields + 8];
            if (nonLoopback > 0) {
                fprintf(stderr, "tokenwire-measure-mpi: %llu TCP socket(s) reach beyond loopback: refusing to report\n",
                        (unsigned long long)nonLoopback);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
            /* Per collective: (window − baseline) / R, as doubles (the division need not be whole). Payload is
             * what the application's bytes needed: bytes sent minus bytes TCP sent again (retransmissions, which
             * do happen on an oversubscribed loopback), reported apart. */
            double payload = 0, dataSegments = 0, segments = 0, retransmitted = 0;
            printf("{\"op\":\"%s\",\"ranks\":%d,\"bytes\":%zu,\"element_bytes\":4,\"reps\":%d,\"payload_bytes_per_rank\":[",
                   kOperationNames[op], ranks, bytes, reps);
            for (int r = 0; r < ranks; ++r) {
                const uint64_t* v = &all[r * kFields];
                const double again = ((double)v[7] - (double)v[3]) / reps;
                const double p = ((double)v[4] - (double)v[0]) / reps - again;
                payload += p;
                retransmitted += again;
                dataSegments += ((double)v[5] - (double)v[1]) / reps;
                segments += ((double)v[6] - (double)v[2]) / reps;
                printf("%s%.1f", r ? "," : "", p);
            }
            const double loBytes = (((double)loD[0] - loC[0]) - ((double)loB[0] - loA[0])) / reps;
            const double loPackets = (((double)loD[1] - loC[1]) - ((double)loB[1] - loA[1])) / reps;
            printf("],\"payload_bytes\":%.1f,\"retransmitted_bytes\":%.1f,\"data_segments\":%.1f,\"segments\":%.1f,"
                   "\"lo_bytes\":%.1f,\"lo_packets\":%.1f,\"time_seconds\":%.6f,\"baseline_seconds\":%.6f}\n",
                   payload, retransmitted, dataSegments, segments, loBytes, loPackets, (maxTimes[0] - maxTimes[1]) / reps,
                   maxTimes[1] / reps);
            fflush(stdout);
        }
    }
    MPI_Finalize();
    return 0;
}
