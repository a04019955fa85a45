/* Write throughput of libzarr_mpi: every rank writes its shard-aligned block of one float32 array
 * (zarr_mpi_decompose + zarr_mpi_write_block), timed from a barrier to the end of the collective write;
 * rank 0 prints one line per repetition. Run by bench/mpi_write.sh with 1, 2 and 4 ranks.
 *
 *   mpiexec -n N zarr_mpi_bench DIR [MIB] [REPS] [CODEC]
 *
 * DIR: where the arrays go (DIR/rep<k>.zarr, removed by the script); MIB: array size (default 128);
 * CODEC: "zstd" (level 1, the default) or "none". Shards of 16 x 512 x 512 (16 MiB), inner chunks of
 * 4 x 256 x 256 (1 MiB). Threads per rank: zarr_mpi_balance_threads() (the node's cores shared out). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zarr_mpi.h"

static void check(zarr_status st, const char *what) {
    if (st != ZARR_OK) {
        fprintf(stderr, "%s: %s\n", what, zarr_mpi_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (me == 0) fprintf(stderr, "usage: zarr_mpi_bench DIR [MIB] [REPS] [zstd|none]\n");
        MPI_Finalize();
        return 2;
    }
    const char *dir = argv[1];
    unsigned long mib = argc > 2 ? strtoul(argv[2], NULL, 10) : 128;
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    const char *codec = argc > 4 ? argv[4] : "zstd";
    if (mib < 1) mib = 1;
    /* float32 [planes, 512, 512]: 1 MiB per plane. */
    const uint64_t planes = mib;
    const char *compressor = strcmp(codec, "none") == 0
                                 ? ""
                                 : ",{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":false}}";
    char meta[2048];
    snprintf(meta, sizeof meta,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[%llu,512,512],\"data_type\":\"float32\","
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[16,512,512]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":0.0,"
             "\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[4,256,256],"
             "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}%s],"
             "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
             "{\"name\":\"crc32c\"}],\"index_location\":\"end\"}}]}",
             (unsigned long long)planes, compressor);
    size_t threads = 0;
    check(zarr_mpi_balance_threads(MPI_COMM_WORLD, &threads), "balance threads");

    for (int rep = 0; rep < reps; rep++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/rep%d.zarr", dir, rep);
        zarr_array *a = NULL;
        check(zarr_mpi_create(MPI_COMM_WORLD, path, meta, &a), "create");
        uint64_t start[3], count[3];
        int shared = 0;
        check(zarr_mpi_decompose(MPI_COMM_WORLD, a, NULL, NULL, start, count, &shared), "decompose");
        size_t n = (size_t)(count[0] * count[1] * count[2]);
        float *buf = malloc(n * sizeof *buf + 1);
        if (buf == NULL) check(ZARR_ERR_INTERNAL, "out of memory");
        /* A smooth field with some noise in the low bits (compresses about as simulation output does). */
        for (size_t i = 0; i < n; i++) {
            uint64_t x = i % 512, y = (i / 512) % 512, z = start[0] + i / (512 * 512);
            buf[i] = (float)(z * 0.01 + y * 0.003 + x * 0.0001) + (float)((i * 2654435761u) % 1000) * 1e-6f;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        check(zarr_mpi_write_block(MPI_COMM_WORLD, a, start, count, buf, n * sizeof *buf), "write");
        double dt = MPI_Wtime() - t0;
        free(buf);
        check(zarr_mpi_close(MPI_COMM_WORLD, a), "close");
        if (me == 0) {
            printf("ranks %d threads/rank %zu codec %s size %lu MiB rep %d: %.3f s, %.1f MiB/s%s\n", size, threads,
                   codec, mib, rep, dt, (double)mib / dt, shared ? " (blocks share shards)" : "");
            fflush(stdout);
        }
    }
    MPI_Finalize();
    return 0;
}
