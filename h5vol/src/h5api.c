/* The HDF5 functions the connector calls, forwarded to the HDF5 library that loaded it.
 *
 * A VOL connector must call back into the very library that loaded it: the identifiers it gets
 * (datatypes, dataspaces, property lists, error stacks) exist only there. h5py's wheel carries its
 * own libhdf5 (renamed, loaded privately by Python), other programs link the system's or their own,
 * so the plugin cannot simply link one. Instead it has no link-time dependency on HDF5: every HDF5
 * function it uses is defined here, hidden (exports.map), as a forwarder to the same function of the
 * loading library, found when HDF5 asks the plugin for its class (H5PLget_plugin_info): dladdr() of
 * the caller's address names that library, dlopen(RTLD_NOLOAD) + dlsym() give its functions. The
 * global identifiers behind HDF5's macros (H5T_NATIVE_INT32, H5E_ERR_CLS, H5P_DATASET_CREATE, ...) are
 * copied from the library by H5open(), which those macros call before each use. */
#define _GNU_SOURCE
#include "h5api.h"

#include <dlfcn.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ZH5_DECLARE_PTR(ret, name, params, args) ret(*name) params;
static struct {
    ZH5_FUNCS(ZH5_DECLARE_PTR)
    herr_t (*H5open)(void);
    herr_t (*H5Epush2)(hid_t, const char *, const char *, unsigned, hid_t, hid_t, hid_t, const char *, ...);
} host;

#define ZH5_DECLARE_VARPTR(name) const hid_t *name;
static struct {
    ZH5_VARS(ZH5_DECLARE_VARPTR)
} host_vars;

/* The local copies of HDF5's global identifiers (declared extern by hdf5.h). */
#define ZH5_DEFINE_VAR(name) hid_t name;
ZH5_VARS(ZH5_DEFINE_VAR)

#if H5_VERS_MAJOR >= 2
/* HDF5 2.x's H5OPEN (in front of every global identifier's macro) calls H5open() only while the library
   flags itself uninitialised: these local flags stay false, so it always calls the H5open() below, which
   refreshes the local copies, as 1.14's H5OPEN does. */
bool H5_libinit_g = false;
bool H5_libterm_g = false;
#endif

static int resolved;

#define ZH5_DEFINE_FORWARDER(ret, name, params, args)                                                  \
    ret name params { return host.name args; }
ZH5_FUNCS(ZH5_DEFINE_FORWARDER)

herr_t H5open(void)
{
    herr_t status = host.H5open();
#define ZH5_COPY_VAR(name) name = *host_vars.name;
    ZH5_VARS(ZH5_COPY_VAR)
    return status;
}

/* HDF5's flag macros (H5F_ACC_RDWR, ...) call H5check_version with the headers' version. The connector
   is meant to run inside other releases (1.14.x, 2.x) than its headers' (h5py's wheel carries its own), whose
   H5check_version would abort on the mismatch: the compatibility that matters, the VOL interface
   version, HDF5 checks itself when it registers the connector. */
herr_t H5check_version(unsigned majnum, unsigned minnum, unsigned relnum)
{
    (void)majnum;
    (void)minnum;
    (void)relnum;
    return 0;
}

herr_t H5Epush2(hid_t err_stack, const char *file, const char *func, unsigned line, hid_t cls_id, hid_t maj_id,
                hid_t min_id, const char *msg, ...)
{
    char text[2048];
    va_list ap;
    va_start(ap, msg);
    vsnprintf(text, sizeof text, msg, ap);
    va_end(ap);
    return host.H5Epush2(err_stack, file, func, line, cls_id, maj_id, min_id, "%s", text);
}

/* Whether p lies in the main program's loaded segments. */
static int main_program_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    const void **p = data;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz, a = (uintptr_t)*p;
        if (ph->p_type == PT_LOAD && a >= lo && a < hi) {
            *p = NULL;   /* found */
            break;
        }
    }
    return 1;   /* the first object listed is the main program: stop there */
}

static int in_main_program(const void *p)
{
    const void *probe = p;
    dl_iterate_phdr(main_program_cb, &probe);
    return probe == NULL;
}

/* A global variable of the library: where the program reads it. A program that uses it directly
   (HDF5's macros) holds a copy-relocated instance that the library itself uses instead of its own;
   dlsym(lib) would give the library's own, never-written one. */
static const hid_t *find_var(void *lib, const char *name)
{
    const void *global = dlsym(RTLD_DEFAULT, name);
    if (global && in_main_program(global))
        return global;
    return dlsym(lib, name);
}

static int resolve_from(void *lib)
{
#define ZH5_LOOKUP(ret, name, params, args)                                                            \
    if (!(*(void **)&host.name = dlsym(lib, #name)))                                                   \
        return 0;
    ZH5_FUNCS(ZH5_LOOKUP)
    ZH5_LOOKUP(herr_t, H5open, (void), ())
    ZH5_LOOKUP(herr_t, H5Epush2, (void), ())
#define ZH5_LOOKUP_VAR(name)                                                                           \
    if (!(host_vars.name = find_var(lib, #name)))                                          \
        return 0;
    ZH5_VARS(ZH5_LOOKUP_VAR)
    return 1;
}

int zh5_api_resolve(const void *caller)
{
    Dl_info info;
    if (resolved)
        return 1;
    if (caller && dladdr(caller, &info) && info.dli_fname) {
        void *lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
        if (lib && resolve_from(lib))
            resolved = 1;
        /* The library stays loaded as long as it runs the plugin; drop the extra reference. */
        if (lib)
            dlclose(lib);
    }
    if (!resolved && resolve_from(RTLD_DEFAULT))   /* statically linked HDF5, or an unknown caller */
        resolved = 1;
    if (resolved)
        H5open();
    return resolved;
}
