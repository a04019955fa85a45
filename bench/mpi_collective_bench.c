/* Collective (zarr_mpi_write_all) against independent (zarr_mpi_write_hyperslab) writes of one float32
 * array, for a decomposition aligned to the shards and one that is not (uneven rows, each rank's block
 * inside a buffer with a one-cell halo). Run by bench/mpi_collective.sh with 1, 2, 4 and 8 ranks.
 *
 *   mpiexec -n N zarr_mpi_collective_bench DIR MIB REPS CODEC
 *
 * DIR: scratch directory; MIB: array size in MiB (rows of 1024 float32, shards of 256 rows, inner chunks
 * of 64 x 256); REPS: repetitions (the best is reported); CODEC: zstd (level 1) or none. Every write is
 * checked: each rank reads its rows back (zarr_mpi_read_all) and compares every cell. One line per
 * (decomposition, mode): the best time (the slowest rank's, between barriers) and the rate. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zarr_mpi.h"

#define NX 1024
#define SHARD_ROWS 256

static int me, np;

static float value(uint64_t i, uint64_t j) { return (float)((i * 7 + j * 13) % 100003) * 0.5f; }

static void die(const char *what, zarr_status st) {
    fprintf(stderr, "rank %d: %s: %s: %s\n", me, what, zarr_status_name(st), zarr_mpi_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Rows of rank q: aligned, whole shards balanced (as zarr_mpi_decompose); not aligned, widths in the
   proportions 1, 1.3, 0.8, 1.1, ... cutting shards anywhere. */
static void rows_of(int aligned, uint64_t ny, int q, uint64_t *lo, uint64_t *hi) {
    if (aligned) {
        uint64_t shards = ny / SHARD_ROWS;
        *lo = shards * (uint64_t)q / (uint64_t)np * SHARD_ROWS;
        *hi = shards * ((uint64_t)q + 1) / (uint64_t)np * SHARD_ROWS;
        return;
    }
    static const double w[8] = {1.0, 1.3, 0.8, 1.1, 0.9, 1.2, 0.7, 1.0};
    double total = 0, before = 0;
    for (int k = 0; k < np; k++) {
        total += w[k % 8];
        if (k < q) {
            before += w[k % 8];
        }
    }
    *lo = (uint64_t)((double)ny * before / total);
    *hi = q == np - 1 ? ny : (uint64_t)((double)ny * (before + w[q % 8]) / total);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc != 5) {
        if (me == 0) {
            fprintf(stderr, "usage: %s DIR MIB REPS zstd|none\n", argv[0]);
        }
        MPI_Finalize();
        return 2;
    }
    const char *dir = argv[1], *codec = argv[4];
    uint64_t mib = strtoull(argv[2], NULL, 10);
    int reps = atoi(argv[3]);
    uint64_t ny = mib * 1024 * 1024 / 4 / NX / SHARD_ROWS * SHARD_ROWS;
    char json[2048], comp[160] = "";
    if (strcmp(codec, "zstd") == 0) {
        snprintf(comp, sizeof comp, ",{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":false}}");
    }
    snprintf(json, sizeof json,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[%llu,%d],\"data_type\":\"float32\","
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[%d,%d]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
             "\"fill_value\":0,\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[64,256],"
             "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}%s],"
             "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":\"crc32c\"}],"
             "\"index_location\":\"end\"}}]}",
             (unsigned long long)ny, NX, SHARD_ROWS, NX, comp);
    if (me == 0) {
        printf("np=%d: %llu x %d float32 (%.0f MiB), shards of %d rows, codec %s, best of %d\n", np,
               (unsigned long long)ny, NX, (double)ny * NX * 4 / 1048576.0, SHARD_ROWS, codec, reps);
    }
    for (int aligned = 1; aligned >= 0; aligned--) {
        uint64_t lo, hi;
        rows_of(aligned, ny, me, &lo, &hi);
        uint64_t rows = hi - lo, w = NX + 2;
        float *local = malloc(sizeof(float) * (rows + 2) * w), *back = malloc(sizeof(float) * (rows * NX + 1));
        if (local == NULL || back == NULL) {
            die("malloc", ZARR_ERR_INTERNAL);
        }
        for (uint64_t i = 0; i < rows + 2; i++) {
            for (uint64_t j = 0; j < w; j++) {
                int halo = i == 0 || i == rows + 1 || j == 0 || j == w - 1;
                local[i * w + j] = halo ? -1.0f : value(lo + i - 1, j - 1);
            }
        }
        for (int collective = 1; collective >= 0; collective--) {
            double best = 1e30;
            for (int rep = 0; rep < reps; rep++) {
                char path[4200];
                snprintf(path, sizeof path, "%s/rep%d_%d_%d.zarr", dir, rep, aligned, collective);
                zarr_array *a = NULL;
                zarr_status st = zarr_mpi_create(MPI_COMM_WORLD, path, json, &a);
                if (st != ZARR_OK) {
                    die("zarr_mpi_create", st);
                }
                uint64_t start[2] = {lo, 0}, count[2] = {rows, NX};
                int64_t stride[2] = {(int64_t)w, 1};
                size_t size = sizeof(float) * ((rows + 2) * w - w - 1);
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                st = collective ? zarr_mpi_write_all(MPI_COMM_WORLD, a, start, count, NULL, stride, ZARR_FLOAT32,
                                                     local + w + 1, size)
                                : zarr_mpi_write_hyperslab(MPI_COMM_WORLD, a, start, count, NULL, stride,
                                                           ZARR_FLOAT32, local + w + 1, size);
                double t = MPI_Wtime() - t0, slowest = 0;
                MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                if (st != ZARR_OK) {
                    die("write", st);
                }
                if (slowest < best) {
                    best = slowest;
                }
                /* Every cell checked. */
                st = zarr_mpi_read_all(MPI_COMM_WORLD, a, start, count, NULL, NULL, ZARR_FLOAT32, back,
                                       sizeof(float) * rows * NX);
                if (st != ZARR_OK) {
                    die("zarr_mpi_read_all", st);
                }
                for (uint64_t i = 0; i < rows; i++) {
                    for (uint64_t j = 0; j < NX; j++) {
                        if (back[i * NX + j] != value(lo + i, j)) {
                            fprintf(stderr, "rank %d: cell (%llu, %llu) wrong\n", me, (unsigned long long)(lo + i),
                                    (unsigned long long)j);
                            MPI_Abort(MPI_COMM_WORLD, 1);
                        }
                    }
                }
                zarr_mpi_close(MPI_COMM_WORLD, a);
            }
            if (me == 0) {
                printf("np=%d %-11s %-11s %-4s %.3f s %.1f MiB/s (values checked)\n", np,
                       aligned ? "aligned" : "non-aligned", collective ? "collective" : "independent", codec, best,
                       (double)ny * NX * 4 / 1048576.0 / best);
                fflush(stdout);
            }
        }
        free(local);
        free(back);
    }
    MPI_Finalize();
    return 0;
}
