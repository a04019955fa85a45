/* Small int16 arrays in a hierarchy, for the tests of deleting and moving members (test_delete.c,
 * test_move.c): the array documents (v3 and v2), writing and checking six values, and asking a group
 * for a member or its number of children. */
#ifndef ZARR_TEST_NODES_H
#define ZARR_TEST_NODES_H

#include "test_util.h"

#include <stdint.h>

#define ARRAY_META                                                                                                   \
    "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[6],\"data_type\":\"int16\",\"chunk_grid\":{\"name\":"  \
    "\"regular\",\"configuration\":{\"chunk_shape\":[4]}},\"chunk_key_encoding\":{\"name\":\"default\","            \
    "\"configuration\":{\"separator\":\"/\"}},\"fill_value\":-1,\"codecs\":[{\"name\":\"bytes\",\"configuration\":" \
    "{\"endian\":\"little\"}}]}"
#define ARRAY_META_V2                                                                                                \
    "{\"zarr_format\":2,\"shape\":[6],\"chunks\":[4],\"dtype\":\"<i2\",\"compressor\":null,\"fill_value\":-1,"    \
    "\"filters\":null,\"order\":\"C\"}"

static inline void write_values(zarr_group *g, const char *name, const char *meta, int16_t base) {
    zarr_array *a = NULL;
    int16_t v[6];
    uint64_t start = 0, count = 6;
    for (int i = 0; i < 6; i++) v[i] = (int16_t)(base + i);
    CHECK_OK(zarr_group_create_array(g, name, meta, &a));
    CHECK_OK(zarr_write_region(a, &start, &count, v, sizeof v));
    CHECK_OK(zarr_close(a));
}

static inline int values_are(zarr_group *g, const char *name, int16_t base) {
    zarr_array *a = NULL;
    int16_t v[6] = {0};
    uint64_t start = 0, count = 6;
    if (zarr_group_open_array(g, name, &a) != ZARR_OK) return 0;
    int ok = zarr_read_region(a, &start, &count, v, sizeof v) == ZARR_OK;
    zarr_close(a);
    for (int i = 0; i < 6; i++) ok = ok && v[i] == base + i;
    return ok;
}

static inline int has_member(zarr_group *g, const char *name) {
    zarr_array *a = NULL;
    zarr_group *sub = NULL;
    if (zarr_group_open_array(g, name, &a) == ZARR_OK) { zarr_close(a); return 1; }
    if (zarr_group_open_group(g, name, &sub) == ZARR_OK) { zarr_group_close(sub); return 1; }
    return 0;
}

static inline size_t child_count(zarr_group *g) {
    zarr_node_list *l = NULL;
    size_t n = (size_t)-1;
    if (zarr_group_list(g, &l) != ZARR_OK || zarr_node_list_size(l, &n) != ZARR_OK) n = (size_t)-1;
    zarr_node_list_free(l);
    return n;
}

#endif
