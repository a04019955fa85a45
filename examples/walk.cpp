// Walking a hierarchy (C++ version of walk.c): builds a small tree, then prints it depth-first with
// each array's shape. Usage: walk_cxx [PATH] (default: the tree it builds, walk_cxx.zarr).
#include <zarr.hpp>

#include <cstdio>
#include <string>

namespace {
int nodes = 0;

void walk(const zarr::Group &g, int depth) {
    for (const zarr::Node &n : g.children()) {
        ++nodes;
        std::printf("%*s%s", 2 * depth, "", n.name.c_str());
        if (n.is_group()) {
            zarr::Group child = g.open_group(n.name);
            std::printf("/  %s\n", child.attributes().c_str());
            walk(child, depth + 1);
        } else {
            zarr::Array a = g.open_array(n.name);
            std::string dims;
            for (uint64_t s : a.shape()) dims += (dims.empty() ? "" : ", ") + std::to_string(s);
            std::printf("  [%s]%s\n", dims.c_str(), a.is_sharded() ? " sharded" : "");
        }
    }
}
}  // namespace

int main(int argc, char **argv) try {
    std::string path = argc > 1 ? argv[1] : "walk_cxx.zarr";
    if (argc <= 1 && zarr::Group::create(path, R"({"title": "walk example"})").valid()) {
        zarr::Group root = zarr::Group::open(path, zarr::Mode::read_write);
        auto field = zarr::ArraySpec::of<float>({180, 360});
        root.create_group("ocean", R"({"model": "toy"})").create_array("sst", field);
        root.create_array("atmosphere/t2m", field.shards({90, 360}).chunks({45, 90}));
        root.create_array("time", zarr::ArraySpec::of<int64_t>({1000}));
    }
    std::printf("/\n");
    walk(zarr::Group::open(path), 1);
    std::printf("%d nodes\n", nodes);
    return argc > 1 || nodes == 5 ? 0 : 1;
} catch (const zarr::Error &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
}
