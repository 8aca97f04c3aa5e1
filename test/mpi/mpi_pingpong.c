/* Point-to-point latency and bandwidth between ranks 0 and 1, for
 * benchmarks/mpi_jobs.py. Rank 0 prints one line:
 *   pingpong latency_us=L bandwidth_MBps=B peer_host=H
 * latency: half the median round trip of an 8-byte message; bandwidth:
 * a window of 1 MiB messages one way, acknowledged by one small reply.
 * Every payload is checked, so a wrong transport cannot pass as a fast one. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  kLatencyRounds = 1000,
  kWarmup = 100,
  kBandwidthBytes = 1 << 20,
  kWindow = 16,
  kBandwidthRounds = 20
};

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static void fail(int rank, const char* what) {
  fprintf(stderr, "rank %d: %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 5);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) fail(rank, "needs at least 2 ranks");
  const int peer = 1 - rank;
  char host[MPI_MAX_PROCESSOR_NAME] = {0}, peer_host[MPI_MAX_PROCESSOR_NAME] = {0};
  int host_len = 0;
  MPI_Get_processor_name(host, &host_len);

  if (rank <= 1) {
    MPI_Sendrecv(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, peer, 0, peer_host, MPI_MAX_PROCESSOR_NAME,
                 MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    double* trips = malloc(sizeof(double) * kLatencyRounds);
    long word = 0;
    for (int i = -kWarmup; i < kLatencyRounds; ++i) {
      const double start = MPI_Wtime();
      if (rank == 0) {
        word = i;
        MPI_Send(&word, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD);
        MPI_Recv(&word, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (word != i + 1) fail(rank, "pingpong payload corrupted");
      } else {
        MPI_Recv(&word, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (word != i) fail(rank, "pingpong payload corrupted");
        word = i + 1;
        MPI_Send(&word, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD);
      }
      if (i >= 0) trips[i] = MPI_Wtime() - start;
    }
    qsort(trips, kLatencyRounds, sizeof(double), compare_doubles);
    const double latency_us = trips[kLatencyRounds / 2] / 2 * 1e6;
    free(trips);

    unsigned char* buffers = malloc((size_t)kBandwidthBytes * kWindow);
    MPI_Request requests[kWindow];
    double best_seconds = 0;
    for (int round = 0; round < kBandwidthRounds; ++round) {
      const double start = MPI_Wtime();
      for (int w = 0; w < kWindow; ++w) {
        unsigned char* buffer = buffers + (size_t)w * kBandwidthBytes;
        if (rank == 0) {
          memset(buffer, (round + w) & 0xff, kBandwidthBytes);
          MPI_Isend(buffer, kBandwidthBytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &requests[w]);
        } else {
          MPI_Irecv(buffer, kBandwidthBytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &requests[w]);
        }
      }
      MPI_Waitall(kWindow, requests, MPI_STATUSES_IGNORE);
      if (rank == 1) {
        for (int w = 0; w < kWindow; ++w) {
          const unsigned char* buffer = buffers + (size_t)w * kBandwidthBytes;
          if (buffer[0] != ((round + w) & 0xff) || buffer[kBandwidthBytes - 1] != buffer[0])
            fail(rank, "bandwidth payload corrupted");
        }
        MPI_Send(&word, 1, MPI_LONG, peer, 3, MPI_COMM_WORLD);
      } else {
        MPI_Recv(&word, 1, MPI_LONG, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const double seconds = MPI_Wtime() - start;
        if (round == 0 || seconds < best_seconds) best_seconds = seconds;
      }
    }
    free(buffers);
    if (rank == 0) {
      const double megabytes = (double)kBandwidthBytes * kWindow / 1e6;
      printf("pingpong latency_us=%.2f bandwidth_MBps=%.0f host=%s peer_host=%s\n", latency_us,
             megabytes / best_seconds, host, peer_host);
      fflush(stdout);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
