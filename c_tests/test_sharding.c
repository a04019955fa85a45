/* sharding_indexed through the C API: shape queries, region I/O across shards and inner chunks,
 * unstored fill-only inner chunks, deleted empty shards, and hostile shard files. */
#include "test_util.h"

#include <stdint.h>

/* 30x22 uint16, shards 16x12 of 4x6 inner chunks, gzip inner, index [bytes, crc32c] at the end. */
static const char *META =
    "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[30,22],\"data_type\":\"uint16\","
    "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[16,12]}},"
    "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},\"fill_value\":7,"
    "\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[4,6],"
    "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":\"gzip\",\"configuration\":{\"level\":1}}],"
    "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":\"crc32c\"}],"
    "\"index_location\":\"end\"}}]}";

static const char *PLAIN =
    "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[8],\"data_type\":\"int8\","
    "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[4]}},"
    "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":0,\"codecs\":[{\"name\":\"bytes\"}]}";

static uint16_t value_at(uint64_t i, uint64_t j) { return (uint16_t)(1000 + i * 37 + j * 5); }

static char *join(const char *dir, const char *rel) {
    char *p = malloc(strlen(dir) + strlen(rel) + 2);
    sprintf(p, "%s/%s", dir, rel);
    return p;
}

static uint64_t le64(const unsigned char *p) {
    uint64_t v = 0;
    int k;
    for (k = 7; k >= 0; k--) v = v << 8 | p[k];
    return v;
}

static void put_le64(unsigned char *p, uint64_t v) {
    int k;
    for (k = 0; k < 8; k++) p[k] = (unsigned char)(v >> (8 * k));
}

/* CRC-32C (Castagnoli), bitwise: to re-seal a deliberately edited index. */
static uint32_t crc32c(const unsigned char *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    size_t i;
    int k;
    for (i = 0; i < n; i++) {
        c ^= p[i];
        for (k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    }
    return ~c;
}

int main(void) {
    char *tmp = t_mkdtemp("sharding");
    char *path = join(tmp, "a.zarr"), *plain = join(tmp, "plain.zarr");
    zarr_array *a = NULL, *p = NULL;
    uint64_t shape[2], inner[2], start[2], count[2];
    int sharded = -1;
    static uint16_t all[30 * 22], back[30 * 22];
    uint64_t i, j;

    /* Shape queries. */
    CHECK_OK(zarr_create(path, META, &a));
    CHECK_OK(zarr_array_chunk_shape(a, shape, 2));
    CHECK(shape[0] == 16 && shape[1] == 12);
    CHECK_OK(zarr_array_inner_chunk_shape(a, inner, 2));
    CHECK(inner[0] == 4 && inner[1] == 6);
    CHECK_OK(zarr_array_is_sharded(a, &sharded));
    CHECK(sharded == 1);
    CHECK_STATUS(zarr_array_inner_chunk_shape(a, inner, 3), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_inner_chunk_shape(a, NULL, 2), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_is_sharded(a, NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_is_sharded(NULL, &sharded), ZARR_ERR_INVALID_HANDLE);
    CHECK_STATUS(zarr_array_inner_chunk_shape(NULL, inner, 2), ZARR_ERR_INVALID_HANDLE);
    CHECK_OK(zarr_create(plain, PLAIN, &p));
    CHECK_OK(zarr_array_is_sharded(p, &sharded));
    CHECK(sharded == 0);
    CHECK_OK(zarr_array_inner_chunk_shape(p, inner, 1));
    CHECK(inner[0] == 4); /* without sharding: the chunk shape */
    CHECK_OK(zarr_close(p));

    /* Whole-array write and read, then regions across shards and inner chunks. */
    for (i = 0; i < 30; i++)
        for (j = 0; j < 22; j++) all[i * 22 + j] = value_at(i, j);
    start[0] = start[1] = 0;
    count[0] = 30;
    count[1] = 22;
    CHECK_OK(zarr_write_region(a, start, count, all, sizeof all));
    CHECK_OK(zarr_read_region(a, start, count, back, sizeof back));
    CHECK(memcmp(all, back, sizeof all) == 0);
    {
        const uint64_t boxes[][4] = {{3, 5, 9, 13}, {15, 11, 2, 2}, {29, 21, 1, 1}, {0, 0, 16, 12}, {14, 0, 4, 22}};
        size_t b;
        for (b = 0; b < sizeof boxes / sizeof boxes[0]; b++) {
            uint16_t part[30 * 22];
            int ok = 1;
            start[0] = boxes[b][0];
            start[1] = boxes[b][1];
            count[0] = boxes[b][2];
            count[1] = boxes[b][3];
            CHECK_OK(zarr_read_region(a, start, count, part, count[0] * count[1] * 2));
            for (i = 0; i < count[0]; i++)
                for (j = 0; j < count[1]; j++)
                    if (part[i * count[1] + j] != value_at(start[0] + i, start[1] + j)) ok = 0;
            CHECK(ok);
        }
    }

    /* An inner chunk written entirely with the fill value is not stored (index entry 2^64-1). */
    {
        uint16_t fill[4 * 6];
        char *shard = join(path, "c/0/0");
        unsigned char *bytes;
        size_t n = 0;
        for (i = 0; i < 24; i++) fill[i] = 7;
        start[0] = 4;
        start[1] = 6; /* inner chunk (1,1) of shard (0,0): entry 1 * 2 + 1 = 3 */
        count[0] = 4;
        count[1] = 6;
        CHECK_OK(zarr_write_region(a, start, count, fill, sizeof fill));
        bytes = t_read_file(shard, &n);
        CHECK(bytes != NULL && n > 8 * 16 + 4);
        if (bytes && n > 8 * 16 + 4) {
            const unsigned char *index = bytes + n - (8 * 16 + 4);
            CHECK(le64(index + 3 * 16) == UINT64_MAX && le64(index + 3 * 16 + 8) == UINT64_MAX);
            CHECK(le64(index + 2 * 16) != UINT64_MAX); /* a neighbour is still stored */
        }
        free(bytes);
        start[0] = 4;
        start[1] = 5;
        count[0] = 1;
        count[1] = 3;
        {
            uint16_t got[3];
            CHECK_OK(zarr_read_region(a, start, count, got, sizeof got));
            CHECK(got[0] == value_at(4, 5) && got[1] == 7 && got[2] == 7);
        }
        free(shard);
    }

    /* The fill value over a whole shard deletes its file. */
    {
        static uint16_t fill[16 * 12];
        char *shard = join(path, "c/0/1"); /* columns 12..23 (array has 22) */
        for (i = 0; i < 16 * 12; i++) fill[i] = 7;
        CHECK(t_exists(shard));
        start[0] = 0;
        start[1] = 12;
        count[0] = 16;
        count[1] = 10;
        CHECK_OK(zarr_write_region(a, start, count, fill, 16 * 10 * 2));
        CHECK(!t_exists(shard));
        free(shard);
    }
    CHECK_OK(zarr_close(a));

    /* Hostile shard files: an index entry beyond the end, a broken index checksum, a short file. */
    {
        char *shard = join(path, "c/1/0");
        unsigned char *orig;
        size_t n = 0;
        orig = t_read_file(shard, &n);
        CHECK(orig != NULL && n > 8 * 16 + 4);
        if (orig && n > 8 * 16 + 4) {
            unsigned char *bad = malloc(n);
            uint16_t buf[30 * 22];
            size_t idx = n - (8 * 16 + 4);
            start[0] = start[1] = 0;
            count[0] = 30;
            count[1] = 22;
            /* entry 0's offset far beyond the end, index checksum re-sealed: invalid data */
            memcpy(bad, orig, n);
            put_le64(bad + idx, (uint64_t)1 << 40);
            {
                uint32_t c = crc32c(bad + idx, 8 * 16);
                int k;
                for (k = 0; k < 4; k++) bad[idx + 8 * 16 + k] = (unsigned char)(c >> (8 * k));
            }
            CHECK(t_write_file(shard, bad, n) == 0);
            CHECK_OK(zarr_open(path, ZARR_READ, &a));
            CHECK_STATUS(zarr_read_region(a, start, count, buf, sizeof buf), ZARR_ERR_CODEC);
            CHECK_MSG("c/1/0");
            /* regions outside the damaged shard still read */
            count[0] = 16;
            CHECK_OK(zarr_read_region(a, start, count, buf, 16 * 22 * 2));
            CHECK(buf[1] == value_at(0, 1));
            count[0] = 30;
            /* a flipped index byte: checksum mismatch */
            memcpy(bad, orig, n);
            bad[idx + 5] ^= 0x10;
            CHECK(t_write_file(shard, bad, n) == 0);
            CHECK_STATUS(zarr_read_region(a, start, count, buf, sizeof buf), ZARR_ERR_CHECKSUM);
            /* shorter than its own index */
            CHECK(t_write_file(shard, orig, 20) == 0);
            CHECK_STATUS(zarr_read_region(a, start, count, buf, sizeof buf), ZARR_ERR_CODEC);
            /* restored: reads again */
            CHECK(t_write_file(shard, orig, n) == 0);
            CHECK_OK(zarr_read_region(a, start, count, buf, sizeof buf));
            CHECK(buf[20 * 22 + 3] == value_at(20, 3));
            CHECK_OK(zarr_close(a));
            free(bad);
        }
        free(orig);
        free(shard);
    }

    free(path);
    free(plain);
    return t_finish("test_sharding", tmp);
}
