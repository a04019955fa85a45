/* One workload, several writers: a float32 array of rows of 1024, written by N ranks from blocks of rows
 * split on shard boundaries (aligned) or unevenly (non-aligned), or from blocks of columns (columns: every
 * rank has a part of every shard, so all N ranks share each shard), each rank's block inside a buffer with
 * a one-cell halo (written in place, no copy). Run by bench/mpi_collective.sh with 1, 2, 4 and 8 ranks.
 *
 *   mpiexec -n N zarr_mpi_collective_bench DIR MIB REPS CODEC
 *
 * DIR: scratch directory; MIB: array size in MiB (shards of 256 rows, inner chunks of 64 x 256); REPS:
 * repetitions (the best is reported); CODEC: zstd (level 1), gzip (level 1: deflate, as HDF5's) or none.
 * Writers: libzarr_mpi collective (zarr_mpi_write_all) and independent (zarr_mpi_write_hyperslab); built
 * with -DZARR_BENCH_PEERS (bench/mpi_collective.sh does, with mpicc, against parallel HDF5 and PnetCDF;
 * CMake's target has neither) also parallel HDF5 (H5FD_MPIO with H5FD_MPIO_COLLECTIVE transfers, chunks of
 * 256 rows, deflate level 1 for gzip, none for none; HDF5 has no zstd filter built in, so not for zstd)
 * and PnetCDF (ncmpi_put_vara_all, uncompressed: for none only; a subarray datatype describes the halo).
 *
 * Every write is checked: each rank reads its rows back (through the same library) and compares every
 * cell. One line per (decomposition, writer): the best time of the slowest rank, from before the write to
 * after the file's close (creation excluded), the rate, and the files and bytes the last repetition left
 * (rank 0 walks the store). */
#define _XOPEN_SOURCE 700 /* nftw */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "zarr_mpi.h"
#ifdef ZARR_BENCH_PEERS
#include <hdf5.h>
#include <pnetcdf.h>
#endif

#define NX 1024
#define SHARD_ROWS 256

static int me, np;

static float value(uint64_t i, uint64_t j) { return (float)((i * 7 + j * 13) % 100003) * 0.5f; }

static void die(const char *what, zarr_status st) {
    fprintf(stderr, "rank %d: %s: %s: %s\n", me, what, zarr_status_name(st), zarr_mpi_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static unsigned long long walk_files, walk_bytes;

static int count_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)p, (void)ftw;
    if (flag == FTW_F) {
        walk_files++;
        walk_bytes += (unsigned long long)sb->st_size;
    }
    return 0;
}

/* Files and bytes below `path` (a file or a directory). */
static void footprint(const char *path, unsigned long long *files, unsigned long long *bytes) {
    walk_files = walk_bytes = 0;
    nftw(path, count_entry, 16, FTW_PHYS);
    *files = walk_files;
    *bytes = walk_bytes;
}

/* The block of rank q: rows [r0, r0 + rows), columns [c0, c0 + cols). */
typedef struct {
    uint64_t r0, rows, c0, cols;
} block;
enum { DECOMP_ALIGNED, DECOMP_UNEVEN, DECOMP_COLUMNS };
static const char *const decomp_names[3] = {"aligned", "non-aligned", "columns"};

/* Aligned: whole shards of rows balanced (as zarr_mpi_decompose); non-aligned: rows in widths in the
   proportions 1, 1.3, 0.8, 1.1, ... cutting shards anywhere; columns: all rows, the columns split evenly
   (every shard shared by every rank; inner chunks of 256 columns cut from 8 ranks on). */
static block block_of(int decomp, uint64_t ny, int q) {
    block b = {0, ny, 0, NX};
    if (decomp == DECOMP_COLUMNS) {
        b.c0 = (uint64_t)NX * (uint64_t)q / (uint64_t)np;
        b.cols = (uint64_t)NX * ((uint64_t)q + 1) / (uint64_t)np - b.c0;
        return b;
    }
    if (decomp == DECOMP_ALIGNED) {
        uint64_t shards = ny / SHARD_ROWS;
        b.r0 = shards * (uint64_t)q / (uint64_t)np * SHARD_ROWS;
        b.rows = shards * ((uint64_t)q + 1) / (uint64_t)np * SHARD_ROWS - b.r0;
        return b;
    }
    static const double w[8] = {1.0, 1.3, 0.8, 1.1, 0.9, 1.2, 0.7, 1.0};
    double total = 0, before = 0;
    for (int k = 0; k < np; k++) {
        total += w[k % 8];
        if (k < q) {
            before += w[k % 8];
        }
    }
    b.r0 = (uint64_t)((double)ny * before / total);
    uint64_t hi = q == np - 1 ? ny : (uint64_t)((double)ny * (before + w[q % 8]) / total);
    b.rows = hi - b.r0;
    return b;
}

enum { WRITER_COLLECTIVE, WRITER_INDEPENDENT, WRITER_HDF5, WRITER_PNETCDF };
static const char *const writer_names[4] = {"libzarr_mpi collective", "libzarr_mpi independent",
                                            "HDF5 mpio collective", "PnetCDF put_vara_all"};

/* This rank's block read back (`back`, dense rows x cols) holds the values written. */
static void check_block(const float *back, block b) {
    for (uint64_t i = 0; i < b.rows; i++) {
        for (uint64_t j = 0; j < b.cols; j++) {
            if (back[i * b.cols + j] != value(b.r0 + i, b.c0 + j)) {
                fprintf(stderr, "rank %d: cell (%llu, %llu) wrong\n", me, (unsigned long long)(b.r0 + i),
                        (unsigned long long)(b.c0 + j));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    }
}

/* The slowest rank's time from a barrier to the end of the write */
static double slowest_since(double t0) {
    double t = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

#ifdef ZARR_BENCH_PEERS
#define H5_OK(call)                                                                                        \
    do {                                                                                                     \
        if ((call) < 0) {                                                                                    \
            fprintf(stderr, "rank %d: %s failed\n", me, #call);                                              \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                    \
        }                                                                                                    \
    } while (0)
#define NCCHECK(call)                                                                                        \
    do {                                                                                                     \
        int rc_ = (call);                                                                                    \
        if (rc_ != NC_NOERR) {                                                                               \
            fprintf(stderr, "rank %d: %s: %s\n", me, #call, ncmpi_strerror(rc_));                           \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                    \
        }                                                                                                    \
    } while (0)

/* The file and memory dataspaces of this rank's block (the memory one: the block inside its halo). */
static void h5_spaces(uint64_t ny, block b, hid_t *fs, hid_t *ms) {
    hsize_t dims[2] = {ny, NX}, start[2] = {b.r0, b.c0}, count[2] = {b.rows, b.cols};
    hsize_t mdims[2] = {b.rows + 2, b.cols + 2}, mstart[2] = {1, 1};
    *fs = H5Screate_simple(2, dims, NULL);
    *ms = H5Screate_simple(2, mdims, NULL);
    H5_OK(H5Sselect_hyperslab(*fs, H5S_SELECT_SET, start, NULL, count, NULL));
    H5_OK(H5Sselect_hyperslab(*ms, H5S_SELECT_SET, mstart, NULL, count, NULL));
}

static double write_hdf5(const char *path, int deflate, uint64_t ny, block b, const float *local, float *back) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), dcpl = H5Pcreate(H5P_DATASET_CREATE), dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5_OK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
    hsize_t chunk[2] = {SHARD_ROWS, NX};
    H5_OK(H5Pset_chunk(dcpl, 2, chunk));
    H5_OK(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER));
    if (deflate) {
        H5_OK(H5Pset_deflate(dcpl, 1));
    }
    H5_OK(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE));
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl), fs, ms;
    H5_OK(f);
    h5_spaces(ny, b, &fs, &ms);
    hid_t d = H5Dcreate2(f, "data", H5T_NATIVE_FLOAT, fs, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5_OK(d);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    H5_OK(H5Dwrite(d, H5T_NATIVE_FLOAT, ms, fs, dxpl, local));
    H5_OK(H5Dclose(d));
    H5_OK(H5Fclose(f));
    double t = slowest_since(t0);
    /* Read back (collectively, into a dense buffer). */
    f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5_OK(f);
    d = H5Dopen2(f, "data", H5P_DEFAULT);
    H5_OK(d);
    hsize_t dense[2] = {b.rows, b.cols};
    hid_t bs = H5Screate_simple(2, dense, NULL);
    H5_OK(H5Dread(d, H5T_NATIVE_FLOAT, bs, fs, dxpl, back));
    check_block(back, b);
    H5Sclose(bs), H5Sclose(fs), H5Sclose(ms), H5Dclose(d), H5Fclose(f);
    H5Pclose(fapl), H5Pclose(dcpl), H5Pclose(dxpl);
    return t;
}

static double write_pnetcdf(const char *path, uint64_t ny, block b, const float *local, float *back) {
    int nc, dims[2], var;
    NCCHECK(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &nc));
    NCCHECK(ncmpi_def_dim(nc, "y", (MPI_Offset)ny, &dims[0]));
    NCCHECK(ncmpi_def_dim(nc, "x", NX, &dims[1]));
    NCCHECK(ncmpi_def_var(nc, "data", NC_FLOAT, 2, dims, &var));
    NCCHECK(ncmpi_enddef(nc));
    int sizes[2] = {(int)b.rows + 2, (int)b.cols + 2}, sub[2] = {(int)b.rows, (int)b.cols}, starts[2] = {1, 1};
    MPI_Datatype block;
    MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_FLOAT, &block);
    MPI_Type_commit(&block);
    MPI_Offset start[2] = {(MPI_Offset)b.r0, (MPI_Offset)b.c0}, count[2] = {(MPI_Offset)b.rows, (MPI_Offset)b.cols};
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    NCCHECK(ncmpi_put_vara_all(nc, var, start, count, local, 1, block));
    NCCHECK(ncmpi_close(nc));
    double t = slowest_since(t0);
    MPI_Type_free(&block);
    NCCHECK(ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &nc));
    NCCHECK(ncmpi_get_vara_float_all(nc, var, start, count, back));
    NCCHECK(ncmpi_close(nc));
    check_block(back, b);
    return t;
}
#endif

/* One write of this rank's block by `writer` (timed), then every cell read back and checked. */
static double timed_write(int writer, const char *path, const char *json, const char *codec, uint64_t ny, block b,
                          const float *local, float *back) {
    const uint64_t w = b.cols + 2, rows = b.rows;
#ifdef ZARR_BENCH_PEERS
    if (writer == WRITER_HDF5) {
        return write_hdf5(path, strcmp(codec, "gzip") == 0, ny, b, local, back);
    }
    if (writer == WRITER_PNETCDF) {
        return write_pnetcdf(path, ny, b, local, back);
    }
#else
    (void)codec, (void)ny;
#endif
    zarr_array *a = NULL;
    zarr_status st = zarr_mpi_create_with_flags(MPI_COMM_WORLD, path, json, ZARR_MPI_CLOBBER, &a);
    if (st != ZARR_OK) {
        die("zarr_mpi_create_with_flags", st);
    }
    uint64_t start[2] = {b.r0, b.c0}, count[2] = {b.rows, b.cols};
    int64_t stride[2] = {(int64_t)w, 1};
    size_t size = sizeof(float) * ((rows + 2) * w - w - 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    st = writer == WRITER_COLLECTIVE
             ? zarr_mpi_write_all(MPI_COMM_WORLD, a, start, count, NULL, stride, ZARR_FLOAT32, local + w + 1, size)
             : zarr_mpi_write_hyperslab(MPI_COMM_WORLD, a, start, count, NULL, stride, ZARR_FLOAT32, local + w + 1,
                                        size);
    zarr_status cs = st == ZARR_OK ? zarr_mpi_close(MPI_COMM_WORLD, a) : ZARR_OK;
    double t = slowest_since(t0);
    if (st != ZARR_OK || cs != ZARR_OK) {
        die("write", st != ZARR_OK ? st : cs);
    }
    if ((st = zarr_mpi_open(MPI_COMM_WORLD, path, ZARR_READ, &a)) != ZARR_OK ||
        (st = zarr_mpi_read_all(MPI_COMM_WORLD, a, start, count, NULL, NULL, ZARR_FLOAT32, back,
                                sizeof(float) * b.rows * b.cols)) != ZARR_OK) {
        die("read back", st);
    }
    check_block(back, b);
    zarr_mpi_close(MPI_COMM_WORLD, a);
    return t;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc != 5) {
        if (me == 0) {
            fprintf(stderr, "usage: %s DIR MIB REPS zstd|gzip|none\n", argv[0]);
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
    } else if (strcmp(codec, "gzip") == 0) {
        snprintf(comp, sizeof comp, ",{\"name\":\"gzip\",\"configuration\":{\"level\":1}}");
    } else if (strcmp(codec, "none") != 0) {
        if (me == 0) {
            fprintf(stderr, "codec %s: zstd, gzip or none\n", codec);
        }
        MPI_Finalize();
        return 2;
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
    for (int decomp = DECOMP_ALIGNED; decomp <= DECOMP_COLUMNS; decomp++) {
        block b = block_of(decomp, ny, me);
        uint64_t rows = b.rows, w = b.cols + 2;
        float *local = malloc(sizeof(float) * (rows + 2) * w), *back = malloc(sizeof(float) * (rows * b.cols + 1));
        if (local == NULL || back == NULL) {
            die("malloc", ZARR_ERR_INTERNAL);
        }
        for (uint64_t i = 0; i < rows + 2; i++) {
            for (uint64_t j = 0; j < w; j++) {
                int halo = i == 0 || i == rows + 1 || j == 0 || j == w - 1;
                local[i * w + j] = halo ? -1.0f : value(b.r0 + i - 1, b.c0 + j - 1);
            }
        }
        for (int writer = 0; writer < 4; writer++) {
            if ((writer == WRITER_HDF5 && strcmp(codec, "zstd") == 0) ||
                (writer == WRITER_PNETCDF && strcmp(codec, "none") != 0)) {
                continue; /* no such codec there */
            }
#ifndef ZARR_BENCH_PEERS
            if (writer >= WRITER_HDF5) {
                continue;
            }
#endif
            double best = 1e30;
            char path[4200] = "";
            for (int rep = 0; rep < reps; rep++) {
                snprintf(path, sizeof path, "%s/rep%d_%d_%d.%s", dir, rep, decomp, writer,
                         writer == WRITER_HDF5 ? "h5" : writer == WRITER_PNETCDF ? "nc" : "zarr");
                double t = timed_write(writer, path, json, codec, ny, b, local, back);
                if (t < best) {
                    best = t;
                }
            }
            if (me == 0) {
                unsigned long long files = 0, bytes = 0;
                footprint(path, &files, &bytes);
                printf("np=%d %-11s %-22s %-4s %.3f s %7.1f MiB/s %6llu files %11llu bytes (values checked)\n", np,
                       decomp_names[decomp], writer_names[writer], codec, best,
                       (double)ny * NX * 4 / 1048576.0 / best, files, bytes);
                fflush(stdout);
            }
        }
        free(local);
        free(back);
    }
    MPI_Finalize();
    return 0;
}
