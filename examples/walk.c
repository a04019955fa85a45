/* Walking a hierarchy: builds a small tree (groups, arrays, attributes), then prints it depth-first
 * with each array's shape and data type, as zarrdump does in full. Usage: walk [PATH] (default: the
 * tree it builds, walk.zarr). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zarr.h>

static int nodes;

static void walk(zarr_group *g, int depth) {
    zarr_node_list *list = NULL;
    size_t n = 0, i;
    if (zarr_group_list(g, &list) != ZARR_OK || zarr_node_list_size(list, &n) != ZARR_OK) {
        fprintf(stderr, "list: %s\n", zarr_last_error());
        exit(1);
    }
    for (i = 0; i < n; i++) {
        const char *name;
        zarr_node_type type;
        zarr_node_list_get(list, i, &name, &type);
        nodes++;
        printf("%*s%s", 2 * depth, "", name);
        if (type == ZARR_NODE_GROUP) {
            zarr_group *child = NULL;
            char *attrs = NULL;
            if (zarr_group_open_group(g, name, &child) != ZARR_OK) exit(1);
            zarr_group_attributes(child, &attrs);
            printf("/  %s\n", attrs);
            zarr_string_free(attrs);
            walk(child, depth + 1);
            zarr_group_close(child);
        } else {
            zarr_array *a = NULL;
            size_t rank = 0, d, esize = 0;
            uint64_t shape[32];
            zarr_data_type t;
            if (zarr_group_open_array(g, name, &a) != ZARR_OK || zarr_array_rank(a, &rank) != ZARR_OK || rank > 32 ||
                zarr_array_shape(a, shape, rank) != ZARR_OK || zarr_array_data_type(a, &t, &esize) != ZARR_OK)
                exit(1);
            printf("  [");
            for (d = 0; d < rank; d++) printf("%s%llu", d ? ", " : "", (unsigned long long)shape[d]);
            printf("] type %d, %zu bytes per element\n", (int)t, esize);
            zarr_close(a);
        }
    }
    zarr_node_list_free(list);
}

static void build(const char *path) {
    zarr_group *root = NULL, *sub = NULL;
    zarr_array_spec *spec = NULL;
    zarr_array *a = NULL;
    const uint64_t s2[2] = {180, 360}, s1[1] = {1000};
    if (zarr_group_create(path, "{\"title\": \"walk example\"}", &root) != ZARR_OK) return; /* exists: walk it */
    zarr_group_create_group(root, "ocean", "{\"model\": \"toy\"}", &sub);
    zarr_array_spec_new(ZARR_FLOAT32, 2, s2, &spec);
    zarr_group_create_array_from_spec(sub, "sst", spec, &a);
    zarr_close(a);
    zarr_group_create_array_from_spec(root, "atmosphere/t2m", spec, &a); /* creates the group atmosphere */
    zarr_close(a);
    zarr_array_spec_free(spec);
    zarr_array_spec_new(ZARR_INT64, 1, s1, &spec);
    zarr_group_create_array_from_spec(root, "time", spec, &a);
    zarr_close(a);
    zarr_array_spec_free(spec);
    zarr_group_close(sub);
    zarr_group_close(root);
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "walk.zarr";
    zarr_group *root = NULL;
    if (argc <= 1) build(path);
    if (zarr_group_open(path, ZARR_READ, &root) != ZARR_OK) {
        fprintf(stderr, "%s: %s\n", path, zarr_last_error());
        return 1;
    }
    printf("/\n");
    walk(root, 1);
    zarr_group_close(root);
    printf("%d nodes\n", nodes);
    return argc > 1 || nodes == 5 ? 0 : 1;
}
