!> Fortran interface to libzarr: module `zarr` (Fortran 2008 with iso_c_binding).
!>
!>   use zarr
!>   type(zarr_array_t) :: a
!>   real(real64) :: t(nx, ny, nz)
!>   call a%open('data.zarr')                          ! read-only; mode=ZARR_READ_WRITE to write
!>   call a%read(t)                                    ! t(i, j, k) = Zarr element [k-1, j-1, i-1]
!>   call a%read(plane, start=[1, 1, 5], stride=[2, 2, 1])
!>   call a%close()
!>   call a%create('out.zarr', shape=[nx, ny, nt], type=ZARR_FLOAT64, chunks=[nx, ny, 1], &
!>                 shards=[nx, ny, 8], codec='zstd', fill=-999.0_real64, dimension_names=['x', 'y', 't'])
!>
!> Dimension order. As in netCDF-Fortran, dimensions are reversed: a Fortran array A(nx, ny, nz) is
!> the Zarr array of shape [nz, ny, nx] (Zarr and C store the last dimension fastest, Fortran the first,
!> so both see the same bytes in the same order). Everything this module takes or returns is in
!> Fortran order with 1-based indices: shape(), chunk_shape(), resize(), start/count/stride, the
!> dimension numbers of dimension_name(). Metadata JSON (create from a document, metadata()) is Zarr's
!> own text and therefore in Zarr order.
!>
!> read/write(buf, start, count, stride, stat, errmsg), generic over integer(int8/16/32/64),
!> real(real32/64), complex(real32/64), logical and logical(c_bool) buffers of rank 0 to 7:
!>   * start (default all 1), count, stride (default all 1) have one value per array dimension;
!>     element start(d) + k*stride(d), k = 0 .. count(d)-1, is selected along dimension d;
!>   * count defaults to shape(buf), followed by 1s when buf has a lower rank than the array (a
!>     plane of a 3-D array is read into a 2-D buffer with start=[1, 1, k]);
!>   * when count is shape(buf) (+ trailing 1s), element (i, j, ..) of the selection is buf(i, j, ..)
!>     and buf may be any array section with positive strides (b(1:10:2, :), a(3, :, :)): the library
!>     reads and writes the caller's memory in place, without a copy;
!>   * otherwise buf must be contiguous and hold at least product(count) elements, which are taken in
!>     Fortran array element order (netCDF's rule);
!>   * the buffer's type need not be the array's: values convert as netCDF converts them (an int16
!>     array reads into real(real64); a value that does not fit the destination is an error,
!>     ZARR_ERR_VALUE). Fortran has no unsigned integers: read uint8/uint16/uint32 arrays into a wider
!>     signed kind (uint64 values above huge(0_int64) read into real(real64) only).
!>   * logical(c_bool) is read and written in place (one byte, 0 or 1: the Zarr bool layout).
!>     Default-kind logical (4 bytes in gfortran, with a compiler-specific representation of
!>     .true.) goes through a temporary one-byte copy of the buffer: correct with any compiler, at the
!>     cost of that copy.
!>
!> Errors. Every procedure takes optional `stat` (integer: ZARR_OK = 0 or a negative ZARR_ERR_* code)
!> and `errmsg` (character(:), allocatable; '' on success). Without `stat`, a failure prints the
!> library's message to the standard error unit and stops the program (ERROR STOP). Messages quote
!> indices as this module takes them, in Fortran order and 1-based: reading start=[1, 1, 12] from an
!> array of shape [4, 5, 10] reports "selection start [1, 1, 12] count [..] ... exceeds the array
!> shape [4, 5, 10] in dimension 3".
!>
!> Handles are plain values: copying a zarr_array_t copies the handle, and close() must be called
!> exactly once per opened handle (no finalizer closes it behind the program's back). Thread safety is
!> the C library's (see include/zarr.h): concurrent reads of one handle are fine.
module zarr
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: int8, int16, int32, int64, real32, real64, error_unit
  implicit none
  private

  !> Open modes.
  integer, parameter, public :: ZARR_READ = 1, ZARR_READ_WRITE = 3
  !> Status codes (include/zarr.h).
  integer, parameter, public :: ZARR_OK = 0, ZARR_ERR_INVALID_ARGUMENT = -1, ZARR_ERR_INVALID_HANDLE = -2, &
    ZARR_ERR_BUFFER_SIZE = -3, ZARR_ERR_OUT_OF_BOUNDS = -4, ZARR_ERR_READ_ONLY = -5, ZARR_ERR_METADATA = -10, &
    ZARR_ERR_UNSUPPORTED = -11, ZARR_ERR_VALUE = -12, ZARR_ERR_CODEC = -20, ZARR_ERR_CHECKSUM = -21, &
    ZARR_ERR_NOT_FOUND = -30, ZARR_ERR_EXISTS = -31, ZARR_ERR_IO = -40, ZARR_ERR_INTERNAL = -50, &
    ZARR_ERR_MEMORY = -60, ZARR_ERR_CONFLICT = -70
  !> Element types (zarr_data_type in include/zarr.h; data_type() returns one of these or another
  !> value of that enum).
  integer, parameter, public :: ZARR_BOOL = 0, ZARR_INT8 = 1, ZARR_INT16 = 2, ZARR_INT32 = 3, ZARR_INT64 = 4, &
    ZARR_UINT8 = 5, ZARR_UINT16 = 6, ZARR_UINT32 = 7, ZARR_UINT64 = 8, ZARR_FLOAT16 = 9, ZARR_FLOAT32 = 10, &
    ZARR_FLOAT64 = 11, ZARR_COMPLEX64 = 12, ZARR_COMPLEX128 = 13, ZARR_RAW = 14, ZARR_STRUCT = 15, &
    ZARR_STRING = 16, ZARR_BYTES = 17
  !> create(..., level=) default: the compressor's default level (zstd 3, gzip 6, blosc 5).
  integer, parameter, public :: ZARR_LEVEL_DEFAULT = -huge(0) - 1
  !> create(..., shuffle=): none, byte shuffle, bit shuffle (blosc codecs only).
  integer, parameter, public :: ZARR_SHUFFLE_NONE = 0, ZARR_SHUFFLE_BYTE = 1, ZARR_SHUFFLE_BIT = 2
  !> Kinds of hierarchy nodes (group%list(), zarr_node_type()).
  integer, parameter, public :: ZARR_NODE_ARRAY = 1, ZARR_NODE_GROUP = 2
  !> zarr_set_message_index_order() (include/zarr.h): the library's messages quote indices in Fortran
  !> order, 1-based, during this module's reads and writes.
  integer(c_int), parameter :: ZARR_INDEX_ORDER_FORTRAN = 1

  !> An open array (or none: the initial state, and after close()).
  type, public :: zarr_array_t
    private
    type(c_ptr) :: handle = c_null_ptr
  contains
    procedure :: open => zarr_array_open
    procedure, private :: zarr_array_create_json
    procedure, private :: zarr_array_create_kw
    generic :: create => zarr_array_create_json, zarr_array_create_kw
    procedure :: close => zarr_array_close
    procedure :: is_open => zarr_array_is_open
    procedure :: c_handle => zarr_array_c_handle
    procedure :: adopt_c_handle => zarr_array_adopt_c_handle
    procedure :: release_c_handle => zarr_array_release_c_handle
    procedure :: rank => zarr_array_rank
    procedure :: shape => zarr_array_shape
    procedure :: chunk_shape => zarr_array_chunk_shape
    procedure :: inner_chunk_shape => zarr_array_inner_chunk_shape
    procedure :: data_type => zarr_array_data_type
    procedure :: element_size => zarr_array_element_size
    procedure :: zarr_format => zarr_array_zarr_format
    procedure :: dimension_name => zarr_array_dimension_name
    procedure :: attributes => zarr_array_attributes
    procedure :: set_attributes => zarr_array_set_attributes
    procedure :: metadata => zarr_array_metadata
    procedure, private :: zarr_array_resize_i4
    procedure, private :: zarr_array_resize_i8
    generic :: resize => zarr_array_resize_i4, zarr_array_resize_i8
    include 'zarr_rw_bindings.inc'
  end type zarr_array_t

  !> An open group (or none).
  type, public :: zarr_group_t
    private
    type(c_ptr) :: handle = c_null_ptr
  contains
    procedure :: open => zarr_group_open
    procedure :: create => zarr_group_create
    procedure :: close => zarr_group_close
    procedure :: is_open => zarr_group_is_open
    procedure :: zarr_format => zarr_group_zarr_format
    procedure :: attributes => zarr_group_attributes
    procedure :: set_attributes => zarr_group_set_attributes
    procedure :: metadata => zarr_group_metadata
    procedure :: list => zarr_group_list
    procedure :: open_array => zarr_group_open_array
    procedure :: open_group => zarr_group_open_group
    procedure :: create_group => zarr_group_create_group
    procedure :: delete_member => zarr_group_delete_member
    procedure :: move_member => zarr_group_move_member
    procedure :: icechunk_commit => zarr_group_icechunk_commit
    procedure :: icechunk_discard => zarr_group_icechunk_discard
    procedure, private :: zarr_group_create_array_json
    procedure, private :: zarr_group_create_array_kw
    generic :: create_array => zarr_group_create_array_json, zarr_group_create_array_kw
  end type zarr_group_t

  public :: zarr_version, zarr_status_name, zarr_node_type, zarr_set_num_threads
  public :: zarr_icechunk_create_repository
  public :: zarr_c_spec_new, zarr_c_spec_free

  ! ---- the C functions (include/zarr.h) ----------------------------------------------------------
  interface
    function c_strlen(s) bind(C, name="strlen") result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function c_strlen
    subroutine c_zarr_string_free(s) bind(C, name="zarr_string_free")
      import :: c_ptr
      type(c_ptr), value :: s
    end subroutine c_zarr_string_free
    function c_zarr_last_error() bind(C, name="zarr_last_error") result(p)
      import :: c_ptr
      type(c_ptr) :: p
    end function c_zarr_last_error
    function c_zarr_status_name(st) bind(C, name="zarr_status_name") result(p)
      import :: c_ptr, c_int32_t
      integer(c_int32_t), value :: st
      type(c_ptr) :: p
    end function c_zarr_status_name
    function c_zarr_version() bind(C, name="zarr_version") result(p)
      import :: c_ptr
      type(c_ptr) :: p
    end function c_zarr_version
    function c_zarr_set_num_threads(n) bind(C, name="zarr_set_num_threads") result(st)
      import :: c_size_t, c_int32_t
      integer(c_size_t), value :: n
      integer(c_int32_t) :: st
    end function c_zarr_set_num_threads
    function c_zarr_node_type_at(path, t) bind(C, name="zarr_node_type_at") result(st)
      import :: c_char, c_int, c_int32_t
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int), intent(out) :: t
      integer(c_int32_t) :: st
    end function c_zarr_node_type_at

    function c_zarr_open(path, mode, out) bind(C, name="zarr_open") result(st)
      import :: c_char, c_int, c_ptr, c_int32_t
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int), value :: mode
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: st
    end function c_zarr_open
    function c_zarr_create(path, json, out) bind(C, name="zarr_create") result(st)
      import :: c_char, c_ptr, c_int32_t
      character(kind=c_char), intent(in) :: path(*), json(*)
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: st
    end function c_zarr_create
    function c_zarr_close(a) bind(C, name="zarr_close") result(st)
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: a
      integer(c_int32_t) :: st
    end function c_zarr_close
    function c_zarr_array_rank(a, r) bind(C, name="zarr_array_rank") result(st)
      import :: c_ptr, c_size_t, c_int32_t
      type(c_ptr), value :: a
      integer(c_size_t), intent(out) :: r
      integer(c_int32_t) :: st
    end function c_zarr_array_rank
    !> zarr_array_shape, zarr_array_chunk_shape, zarr_array_inner_chunk_shape, zarr_array_grid_shape
    function c_zarr_array_shape(a, s, r) bind(C, name="zarr_array_shape") result(st)
      import :: c_ptr, c_size_t, c_int32_t, c_int64_t
      type(c_ptr), value :: a
      integer(c_int64_t), intent(out) :: s(*)
      integer(c_size_t), value :: r
      integer(c_int32_t) :: st
    end function c_zarr_array_shape
    function c_zarr_array_chunk_shape(a, s, r) bind(C, name="zarr_array_chunk_shape") result(st)
      import :: c_ptr, c_size_t, c_int32_t, c_int64_t
      type(c_ptr), value :: a
      integer(c_int64_t), intent(out) :: s(*)
      integer(c_size_t), value :: r
      integer(c_int32_t) :: st
    end function c_zarr_array_chunk_shape
    function c_zarr_array_inner_chunk_shape(a, s, r) bind(C, name="zarr_array_inner_chunk_shape") result(st)
      import :: c_ptr, c_size_t, c_int32_t, c_int64_t
      type(c_ptr), value :: a
      integer(c_int64_t), intent(out) :: s(*)
      integer(c_size_t), value :: r
      integer(c_int32_t) :: st
    end function c_zarr_array_inner_chunk_shape
    function c_zarr_array_resize(a, s, r) bind(C, name="zarr_array_resize") result(st)
      import :: c_ptr, c_size_t, c_int32_t, c_int64_t
      type(c_ptr), value :: a
      integer(c_int64_t), intent(in) :: s(*)
      integer(c_size_t), value :: r
      integer(c_int32_t) :: st
    end function c_zarr_array_resize
    function c_zarr_array_data_type(a, t, n) bind(C, name="zarr_array_data_type") result(st)
      import :: c_ptr, c_int, c_size_t, c_int32_t
      type(c_ptr), value :: a
      integer(c_int), intent(out) :: t
      integer(c_size_t), intent(out) :: n
      integer(c_int32_t) :: st
    end function c_zarr_array_data_type
    function c_zarr_array_zarr_format(a, f) bind(C, name="zarr_array_zarr_format") result(st)
      import :: c_ptr, c_int, c_int32_t
      type(c_ptr), value :: a
      integer(c_int), intent(out) :: f
      integer(c_int32_t) :: st
    end function c_zarr_array_zarr_format
    function c_zarr_array_dimension_name(a, d, s) bind(C, name="zarr_array_dimension_name") result(st)
      import :: c_ptr, c_size_t, c_int32_t
      type(c_ptr), value :: a
      integer(c_size_t), value :: d
      type(c_ptr), intent(out) :: s
      integer(c_int32_t) :: st
    end function c_zarr_array_dimension_name
    function c_zarr_array_attributes(a, s) bind(C, name="zarr_array_attributes") result(st)
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: a
      type(c_ptr), intent(out) :: s
      integer(c_int32_t) :: st
    end function c_zarr_array_attributes
    function c_zarr_array_set_attributes(a, json) bind(C, name="zarr_array_set_attributes") result(st)
      import :: c_ptr, c_char, c_int32_t
      type(c_ptr), value :: a
      character(kind=c_char), intent(in) :: json(*)
      integer(c_int32_t) :: st
    end function c_zarr_array_set_attributes
    function c_zarr_array_metadata(a, s) bind(C, name="zarr_array_metadata") result(st)
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: a
      type(c_ptr), intent(out) :: s
      integer(c_int32_t) :: st
    end function c_zarr_array_metadata
    function c_zarr_read_hyperslab(a, start, count, step, bstride, btype, buf, nbytes) &
        bind(C, name="zarr_read_hyperslab") result(st)
      import :: c_ptr, c_int, c_size_t, c_int32_t, c_int64_t
      type(c_ptr), value :: a
      integer(c_int64_t), intent(in) :: start(*), count(*), step(*), bstride(*)
      integer(c_int), value :: btype
      type(c_ptr), value :: buf
      integer(c_size_t), value :: nbytes
      integer(c_int32_t) :: st
    end function c_zarr_read_hyperslab
    function c_zarr_set_message_index_order(order, previous) bind(C, name="zarr_set_message_index_order") result(st)
      import :: c_int, c_int32_t
      integer(c_int), value :: order
      integer(c_int), intent(out) :: previous
      integer(c_int32_t) :: st
    end function c_zarr_set_message_index_order
    function c_zarr_write_hyperslab(a, start, count, step, bstride, btype, buf, nbytes) &
        bind(C, name="zarr_write_hyperslab") result(st)
      import :: c_ptr, c_int, c_size_t, c_int32_t, c_int64_t
      type(c_ptr), value :: a
      integer(c_int64_t), intent(in) :: start(*), count(*), step(*), bstride(*)
      integer(c_int), value :: btype
      type(c_ptr), value :: buf
      integer(c_size_t), value :: nbytes
      integer(c_int32_t) :: st
    end function c_zarr_write_hyperslab

    function c_zarr_group_open(path, mode, out) bind(C, name="zarr_group_open") result(st)
      import :: c_char, c_int32_t, c_ptr
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int32_t), value :: mode
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: st
    end function c_zarr_group_open
    function c_zarr_group_create_ex(path, attrs, fmt, out) bind(C, name="zarr_group_create_ex") result(st)
      import :: c_char, c_int, c_int32_t, c_ptr
      character(kind=c_char), intent(in) :: path(*)
      type(c_ptr), value :: attrs
      integer(c_int), value :: fmt
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: st
    end function c_zarr_group_create_ex
    function c_zarr_group_close(g) bind(C, name="zarr_group_close") result(st)
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: g
      integer(c_int32_t) :: st
    end function c_zarr_group_close
    function c_zarr_group_zarr_format(g, f) bind(C, name="zarr_group_zarr_format") result(st)
      import :: c_ptr, c_int, c_int32_t
      type(c_ptr), value :: g
      integer(c_int), intent(out) :: f
      integer(c_int32_t) :: st
    end function c_zarr_group_zarr_format
    function c_zarr_group_attributes(g, s) bind(C, name="zarr_group_attributes") result(st)
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: g
      type(c_ptr), intent(out) :: s
      integer(c_int32_t) :: st
    end function c_zarr_group_attributes
    function c_zarr_group_set_attributes(g, json) bind(C, name="zarr_group_set_attributes") result(st)
      import :: c_ptr, c_char, c_int32_t
      type(c_ptr), value :: g
      character(kind=c_char), intent(in) :: json(*)
      integer(c_int32_t) :: st
    end function c_zarr_group_set_attributes
    function c_zarr_icechunk_commit(g, msg, flags, id) bind(C, name="zarr_icechunk_commit") result(st)
      import :: c_ptr, c_char, c_int, c_int32_t
      type(c_ptr), value :: g
      character(kind=c_char), intent(in) :: msg(*)
      integer(c_int), value :: flags
      type(c_ptr), intent(out) :: id
      integer(c_int32_t) :: st
    end function c_zarr_icechunk_commit
    function c_zarr_icechunk_create_repository(loc, id) bind(C, name="zarr_icechunk_create_repository") result(st)
      import :: c_ptr, c_char, c_int32_t
      character(kind=c_char), intent(in) :: loc(*)
      type(c_ptr), intent(out) :: id
      integer(c_int32_t) :: st
    end function c_zarr_icechunk_create_repository
    function c_zarr_icechunk_discard(g) bind(C, name="zarr_icechunk_discard") result(st)
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: g
      integer(c_int32_t) :: st
    end function c_zarr_icechunk_discard
    function c_zarr_group_metadata(g, s) bind(C, name="zarr_group_metadata") result(st)
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: g
      type(c_ptr), intent(out) :: s
      integer(c_int32_t) :: st
    end function c_zarr_group_metadata
    function c_zarr_group_open_array(g, name, out) bind(C, name="zarr_group_open_array") result(st)
      import :: c_ptr, c_char, c_int32_t
      type(c_ptr), value :: g
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: st
    end function c_zarr_group_open_array
    function c_zarr_group_create_array(g, name, json, out) bind(C, name="zarr_group_create_array") result(st)
      import :: c_ptr, c_char, c_int32_t
      type(c_ptr), value :: g
      character(kind=c_char), intent(in) :: name(*), json(*)
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: st
    end function c_zarr_group_create_array
    function c_zarr_group_open_group(g, name, out) bind(C, name="zarr_group_open_group") result(st)
      import :: c_ptr, c_char, c_int32_t
      type(c_ptr), value :: g
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: st
    end function c_zarr_group_open_group
    function c_zarr_group_create_group(g, name, attrs, out) bind(C, name="zarr_group_create_group") result(st)
      import :: c_ptr, c_char, c_int32_t
      type(c_ptr), value :: g
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), value :: attrs
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: st
    end function c_zarr_group_create_group
    function c_zarr_group_delete_member(g, name) bind(C, name="zarr_group_delete_member") result(st)
      import :: c_ptr, c_char, c_int32_t
      type(c_ptr), value :: g
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int32_t) :: st
    end function c_zarr_group_delete_member
    function c_zarr_group_move_member(g, src, dst) bind(C, name="zarr_group_move_member") result(st)
      import :: c_ptr, c_char, c_int32_t
      type(c_ptr), value :: g
      character(kind=c_char), intent(in) :: src(*), dst(*)
      integer(c_int32_t) :: st
    end function c_zarr_group_move_member
    function c_zarr_group_list(g, out) bind(C, name="zarr_group_list") result(st)
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: g
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: st
    end function c_zarr_group_list
    function c_zarr_node_list_size(l, n) bind(C, name="zarr_node_list_size") result(st)
      import :: c_ptr, c_size_t, c_int32_t
      type(c_ptr), value :: l
      integer(c_size_t), intent(out) :: n
      integer(c_int32_t) :: st
    end function c_zarr_node_list_size
    function c_zarr_node_list_get(l, i, name, t) bind(C, name="zarr_node_list_get") result(st)
      import :: c_ptr, c_size_t, c_int, c_int32_t
      type(c_ptr), value :: l
      integer(c_size_t), value :: i
      type(c_ptr), intent(out) :: name
      integer(c_int), intent(out) :: t
      integer(c_int32_t) :: st
    end function c_zarr_node_list_get
    function c_zarr_array_spec_new(t, r, shape, out) bind(C, name="zarr_array_spec_new") result(st)
      import :: c_int, c_size_t, c_int64_t, c_ptr, c_int32_t
      integer(c_int), value :: t
      integer(c_size_t), value :: r
      integer(c_int64_t), intent(in) :: shape(*)
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: st
    end function c_zarr_array_spec_new
    function c_zarr_array_spec_free(spec) bind(C, name="zarr_array_spec_free") result(st)
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: spec
      integer(c_int32_t) :: st
    end function c_zarr_array_spec_free
    function c_zarr_array_spec_set_chunks(spec, c, r) bind(C, name="zarr_array_spec_set_chunks") result(st)
      import :: c_ptr, c_size_t, c_int64_t, c_int32_t
      type(c_ptr), value :: spec
      integer(c_int64_t), intent(in) :: c(*)
      integer(c_size_t), value :: r
      integer(c_int32_t) :: st
    end function c_zarr_array_spec_set_chunks
    function c_zarr_array_spec_set_shards(spec, c, r) bind(C, name="zarr_array_spec_set_shards") result(st)
      import :: c_ptr, c_size_t, c_int64_t, c_int32_t
      type(c_ptr), value :: spec
      integer(c_int64_t), intent(in) :: c(*)
      integer(c_size_t), value :: r
      integer(c_int32_t) :: st
    end function c_zarr_array_spec_set_shards
    function c_zarr_array_spec_set_compressor(spec, name, level) bind(C, name="zarr_array_spec_set_compressor") &
        result(st)
      import :: c_ptr, c_char, c_int, c_int32_t
      type(c_ptr), value :: spec
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: level
      integer(c_int32_t) :: st
    end function c_zarr_array_spec_set_compressor
    function c_zarr_array_spec_set_shuffle(spec, shuffle) bind(C, name="zarr_array_spec_set_shuffle") result(st)
      import :: c_ptr, c_int, c_int32_t
      type(c_ptr), value :: spec
      integer(c_int), value :: shuffle
      integer(c_int32_t) :: st
    end function c_zarr_array_spec_set_shuffle
    function c_zarr_array_spec_set_fill_value(spec, v, n) bind(C, name="zarr_array_spec_set_fill_value") result(st)
      import :: c_ptr, c_int8_t, c_size_t, c_int32_t
      type(c_ptr), value :: spec
      integer(c_int8_t), intent(in) :: v(*)
      integer(c_size_t), value :: n
      integer(c_int32_t) :: st
    end function c_zarr_array_spec_set_fill_value
    function c_zarr_array_spec_set_dimension_names(spec, names, r) bind(C, name="zarr_array_spec_set_dimension_names") &
        result(st)
      import :: c_ptr, c_size_t, c_int32_t
      type(c_ptr), value :: spec
      type(c_ptr), intent(in) :: names(*)
      integer(c_size_t), value :: r
      integer(c_int32_t) :: st
    end function c_zarr_array_spec_set_dimension_names
    function c_zarr_array_spec_set_attributes(spec, json) bind(C, name="zarr_array_spec_set_attributes") result(st)
      import :: c_ptr, c_char, c_int32_t
      type(c_ptr), value :: spec
      character(kind=c_char), intent(in) :: json(*)
      integer(c_int32_t) :: st
    end function c_zarr_array_spec_set_attributes
    function c_zarr_array_spec_set_zarr_format(spec, f) bind(C, name="zarr_array_spec_set_zarr_format") result(st)
      import :: c_ptr, c_int, c_int32_t
      type(c_ptr), value :: spec
      integer(c_int), value :: f
      integer(c_int32_t) :: st
    end function c_zarr_array_spec_set_zarr_format
    function c_zarr_create_from_spec(path, spec, out) bind(C, name="zarr_create_from_spec") result(st)
      import :: c_ptr, c_char, c_int32_t
      character(kind=c_char), intent(in) :: path(*)
      type(c_ptr), value :: spec
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: st
    end function c_zarr_create_from_spec
    function c_zarr_group_create_array_from_spec(g, name, spec, out) &
        bind(C, name="zarr_group_create_array_from_spec") result(st)
      import :: c_ptr, c_char, c_int32_t
      type(c_ptr), value :: g
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), value :: spec
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: st
    end function c_zarr_group_create_array_from_spec
    function c_zarr_node_list_free(l) bind(C, name="zarr_node_list_free") result(st)
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: l
      integer(c_int32_t) :: st
    end function c_zarr_node_list_free
  end interface

contains

  ! ---- helpers -----------------------------------------------------------------------------------

  !> `s` as a NUL-terminated C string.
  pure function c_str(s) result(a)
    character(*), intent(in) :: s
    character(kind=c_char) :: a(len(s) + 1)
    integer :: i
    do i = 1, len(s)
      a(i) = s(i:i)
    end do
    a(len(s) + 1) = c_null_char
  end function c_str

  !> A copy of the NUL-terminated C string at `p` ('' for NULL).
  function f_str(p) result(s)
    type(c_ptr), intent(in) :: p
    character(:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer(c_size_t) :: n, i
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    n = c_strlen(p)
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function f_str

  !> A string returned by libzarr, copied and freed.
  function take_str(p) result(s)
    type(c_ptr), intent(in) :: p
    character(:), allocatable :: s
    s = f_str(p)
    call c_zarr_string_free(p)
  end function take_str

  pure function itoa(i) result(s)
    integer(c_int64_t), intent(in) :: i
    character(:), allocatable :: s
    character(24) :: buf
    write(buf, '(i0)') i
    s = trim(buf)
  end function itoa

  !> Bytes from the element at `p` to the element at `q`.
  function zarr_byte_distance(p, q) result(d)
    type(c_ptr), intent(in) :: p, q
    integer(c_int64_t) :: d
    d = int(transfer(q, 0_c_intptr_t) - transfer(p, 0_c_intptr_t), c_int64_t)
  end function zarr_byte_distance

  !> Reports a failure: into stat/errmsg when the caller passed stat, else on error_unit + ERROR STOP.
  !>
  !> Every public procedure collects its message in a local `zmsg` and copies it into its optional
  !> `errmsg` itself: gfortran 12 loses the length of a deferred-length character that is passed on as
  !> an optional dummy argument (the caller sees the old length), so `errmsg` is never passed down.
  subroutine zarr_fail(st, msg, stat, errmsg)
    integer, intent(in) :: st
    character(*), intent(in) :: msg
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(inout) :: errmsg
    errmsg = msg
    if (present(stat)) then
      stat = st
      return
    end if
    write(error_unit, '(a)') 'libzarr: ' // msg
    error stop
  end subroutine zarr_fail

  !> Reports the outcome of a C call: success sets stat = 0 and errmsg = ''; a failure is reported by
  !> zarr_fail() as "<what>: <status name>: <zarr_last_error()>".
  subroutine zarr_check(st, what, stat, errmsg)
    integer(c_int32_t), intent(in) :: st
    character(*), intent(in) :: what
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(inout) :: errmsg
    if (st == ZARR_OK) then
      if (present(stat)) stat = ZARR_OK
      errmsg = ''
      return
    end if
    call zarr_fail(int(st), what // ': ' // f_str(c_zarr_status_name(st)) // ': ' // f_str(c_zarr_last_error()), &
                   stat, errmsg)
  end subroutine zarr_check

  !> Fails unless the handle is open.
  logical function not_open(h, what, stat, errmsg)
    type(c_ptr), intent(in) :: h
    character(*), intent(in) :: what
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(inout) :: errmsg
    not_open = .not. c_associated(h)
    if (not_open) call zarr_fail(ZARR_ERR_INVALID_HANDLE, what // ': the handle is not open', stat, errmsg)
  end function not_open

  ! ---- module procedures ---------------------------------------------------------------------------

  !> The library's version, "MAJOR.MINOR.PATCH".
  function zarr_version() result(v)
    character(:), allocatable :: v
    v = f_str(c_zarr_version())
  end function zarr_version

  !> The name of a status code, e.g. 'ZARR_ERR_NOT_FOUND'.
  function zarr_status_name(st) result(v)
    integer, intent(in) :: st
    character(:), allocatable :: v
    v = f_str(c_zarr_status_name(int(st, c_int32_t)))
  end function zarr_status_name

  !> What is stored at `path`: ZARR_NODE_ARRAY or ZARR_NODE_GROUP (ZARR_ERR_NOT_FOUND: neither).
  integer function zarr_node_type(path, stat, errmsg) result(t)
    character(*), intent(in) :: path
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(c_int) :: ct
    ct = 0
    call zarr_check(c_zarr_node_type_at(c_str(trim(path)), ct), 'zarr_node_type(' // trim(path) // ')', stat, zmsg)
    t = int(ct)
    if (present(errmsg)) errmsg = zmsg
  end function zarr_node_type

  !> Icechunk: creates an empty repository at `location` ('icechunk://DIR', trailing blanks ignored)
  !> and returns its first snapshot's id ('' on failure).
  function zarr_icechunk_create_repository(location, stat, errmsg) result(snapshot_id)
    character(*), intent(in) :: location
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    character(:), allocatable :: snapshot_id
    integer(c_int32_t) :: st
    type(c_ptr) :: p
    snapshot_id = ''
    st = c_zarr_icechunk_create_repository(c_str(trim(location)), p)
    if (st == ZARR_OK) snapshot_id = take_str(p)
    call zarr_check(st, 'zarr_icechunk_create_repository(' // trim(location) // ')', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end function zarr_icechunk_create_repository

  !> Sets the number of threads that encode and decode chunks (0: the default).
  subroutine zarr_set_num_threads(n, stat, errmsg)
    integer, intent(in) :: n
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    if (n < 0) then
      call zarr_fail(ZARR_ERR_INVALID_ARGUMENT, 'zarr_set_num_threads: negative count', stat, zmsg)
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    call zarr_check(c_zarr_set_num_threads(int(n, c_size_t)), 'zarr_set_num_threads', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_set_num_threads

  ! ---- zarr_array_t ------------------------------------------------------------------------------

  !> Opens the array stored in the directory `path` (trailing blanks ignored); `mode` is ZARR_READ
  !> (the default) or ZARR_READ_WRITE. The handle must not be open already.
  subroutine zarr_array_open(self, path, mode, stat, errmsg)
    class(zarr_array_t), intent(inout) :: self
    character(*), intent(in) :: path
    integer, intent(in), optional :: mode
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(c_int) :: m
    if (c_associated(self%handle)) then
      call zarr_fail(ZARR_ERR_INVALID_ARGUMENT, 'open(' // trim(path) // '): the handle is open already', stat, zmsg)
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    m = ZARR_READ
    if (present(mode)) m = int(mode, c_int)
    call zarr_check(c_zarr_open(c_str(trim(path)), m, self%handle), 'open(' // trim(path) // ')', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_array_open

  !> Creates an array in the directory `path` from a complete Zarr v3 metadata document (JSON, in
  !> Zarr's dimension order) and opens it for reading and writing.
  subroutine zarr_array_create_json(self, path, metadata_json, stat, errmsg)
    class(zarr_array_t), intent(inout) :: self
    character(*), intent(in) :: path, metadata_json
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    if (c_associated(self%handle)) then
      call zarr_fail(ZARR_ERR_INVALID_ARGUMENT, 'create(' // trim(path) // '): the handle is open already', &
                     stat, zmsg)
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    call zarr_check(c_zarr_create(c_str(trim(path)), c_str(metadata_json), self%handle), &
                    'create(' // trim(path) // ')', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_array_create_json

  !> Creates an array in the directory `path` from keywords and opens it for reading and writing
  !> (include/zarr.h: zarr_array_spec_new() and the zarr_array_spec_set_*() calls give the defaults
  !> and rules):
  !>   shape       extents in Fortran order (any integer kind; stored reversed, as everywhere here)
  !>   type        the element type: ZARR_FLOAT64, ZARR_INT32, ...
  !>   chunks      chunk extents in Fortran order (of a sharded array: the inner chunks)
  !>   shards      shard extents in Fortran order: a sharded array (Zarr v3)
  !>   codec       'zstd' (default, level 3), 'gzip', 'blosc-lz4', 'blosc-zstd', ..., 'none'
  !>   level       the compression level (default: the codec's default)
  !>   shuffle     ZARR_SHUFFLE_NONE / _BYTE / _BIT
  !>   fill        the fill value: an integer, real, complex or logical scalar fitting the type
  !>   dimension_names  one name per dimension, in Fortran order (trailing blanks ignored)
  !>   attributes  the user attributes, a JSON object text
  !>   zarr_format 3 (default) or 2
  subroutine zarr_array_create_kw(self, path, shape, type, chunks, shards, codec, level, shuffle, fill, &
                                  dimension_names, attributes, zarr_format, stat, errmsg)
    class(zarr_array_t), intent(inout) :: self
    character(*), intent(in) :: path
    class(*), intent(in) :: shape(:)
    integer, intent(in) :: type
    class(*), intent(in), optional :: chunks(:), shards(:), fill
    character(*), intent(in), optional :: codec, attributes
    integer, intent(in), optional :: level, shuffle, zarr_format
    character(*), intent(in), optional :: dimension_names(:)
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg, msg
    type(c_ptr) :: spec
    integer :: st
    integer(c_int32_t) :: fst
    if (c_associated(self%handle)) then
      call zarr_fail(ZARR_ERR_INVALID_ARGUMENT, 'create(' // trim(path) // '): the handle is open already', &
                     stat, zmsg)
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    call make_spec(shape, type, chunks, shards, codec, level, shuffle, fill, dimension_names, attributes, &
                   zarr_format, spec, st, msg)
    if (st /= ZARR_OK) then
      call zarr_fail(st, 'create(' // trim(path) // '): ' // msg, stat, zmsg)
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    st = c_zarr_create_from_spec(c_str(trim(path)), spec, self%handle)
    fst = c_zarr_array_spec_free(spec)
    call zarr_check(int(st, c_int32_t), 'create(' // trim(path) // ')', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_array_create_kw

  !> For modules built over this one (zarr_mpi): the C creation spec (a zarr_array_spec pointer of
  !> include/zarr.h) that create(path, shape=, type=, ...) builds from the same keywords, in the same
  !> Fortran order; release it with zarr_c_spec_free(). On failure `spec` is c_null_ptr and stat/errmsg
  !> say why (without stat: ERROR STOP).
  subroutine zarr_c_spec_new(spec, shape, type, chunks, shards, codec, level, shuffle, fill, &
                             dimension_names, attributes, zarr_format, stat, errmsg)
    type(c_ptr), intent(out) :: spec
    class(*), intent(in) :: shape(:)
    integer, intent(in) :: type
    class(*), intent(in), optional :: chunks(:), shards(:), fill
    character(*), intent(in), optional :: codec, attributes
    integer, intent(in), optional :: level, shuffle, zarr_format
    character(*), intent(in), optional :: dimension_names(:)
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg, msg
    integer :: st
    call make_spec(shape, type, chunks, shards, codec, level, shuffle, fill, dimension_names, attributes, &
                   zarr_format, spec, st, msg)
    if (st /= ZARR_OK) then
      call zarr_fail(st, 'spec: ' // msg, stat, zmsg)
    else
      call zarr_check(int(st, c_int32_t), 'spec', stat, zmsg)
    end if
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_c_spec_new

  !> Frees a spec of zarr_c_spec_new() (c_null_ptr: nothing to do); `spec` becomes c_null_ptr.
  subroutine zarr_c_spec_free(spec)
    type(c_ptr), intent(inout) :: spec
    integer(c_int32_t) :: fst
    fst = c_zarr_array_spec_free(spec)
    spec = c_null_ptr
  end subroutine zarr_c_spec_free

  !> Values of an integer vector of any integer kind as int64 (ok = .false. for another type).
  subroutine to_i64(x, v, ok)
    class(*), intent(in) :: x(:)
    integer(int64), allocatable, intent(out) :: v(:)
    logical, intent(out) :: ok
    ok = .true.
    select type (x)
    type is (integer(int8))
      v = int(x, int64)
    type is (integer(int16))
      v = int(x, int64)
    type is (integer(int32))
      v = int(x, int64)
    type is (integer(int64))
      v = x
    class default
      ok = .false.
      allocate(v(0))
    end select
  end subroutine to_i64

  !> The bytes of the fill value `fill` as an element of type `t` (native-endian); st /= ZARR_OK with
  !> a message when `fill` cannot be such an element (a real for an integer type, out of range, ...).
  subroutine fill_bytes(fill, t, bytes, st, msg)
    class(*), intent(in) :: fill
    integer, intent(in) :: t
    integer(c_int8_t), allocatable, intent(out) :: bytes(:)
    integer, intent(out) :: st
    character(:), allocatable, intent(out) :: msg
    integer(int64) :: i
    real(real64) :: r
    complex(real64) :: z
    logical :: is_int, is_real, is_cplx, is_bool, b
    integer(c_int8_t) :: mold(1)
    is_int = .false.; is_real = .false.; is_cplx = .false.; is_bool = .false.
    i = 0; r = 0; z = 0; b = .false.
    select type (fill)
    type is (integer(int8))
      i = fill; is_int = .true.
    type is (integer(int16))
      i = fill; is_int = .true.
    type is (integer(int32))
      i = fill; is_int = .true.
    type is (integer(int64))
      i = fill; is_int = .true.
    type is (real(real32))
      r = fill; is_real = .true.
    type is (real(real64))
      r = fill; is_real = .true.
    type is (complex(real32))
      z = fill; is_cplx = .true.
    type is (complex(real64))
      z = fill; is_cplx = .true.
    type is (logical(c_bool))
      b = fill; is_bool = .true.
    type is (logical)
      b = fill; is_bool = .true.
    end select
    st = ZARR_OK
    msg = ''
    allocate(bytes(0))
    if (is_int) then
      r = real(i, real64)
      z = cmplx(r, 0, real64)
    else if (is_real) then
      z = cmplx(r, 0, real64)
    end if
    select case (t)
    case (ZARR_BOOL)
      if (.not. is_bool) go to 900
      bytes = [merge(1_c_int8_t, 0_c_int8_t, b)]
    case (ZARR_INT8, ZARR_INT16, ZARR_INT32, ZARR_INT64, ZARR_UINT8, ZARR_UINT16, ZARR_UINT32, ZARR_UINT64)
      if (.not. is_int) go to 900
      select case (t)
      case (ZARR_INT8)
        if (i < -huge(0_int8) - 1 .or. i > huge(0_int8)) go to 910
        bytes = transfer(int(i, int8), mold)
      case (ZARR_INT16)
        if (i < -huge(0_int16) - 1 .or. i > huge(0_int16)) go to 910
        bytes = transfer(int(i, int16), mold)
      case (ZARR_INT32)
        if (i < -huge(0_int32) - 1_int64 .or. i > huge(0_int32)) go to 910
        bytes = transfer(int(i, int32), mold)
      case (ZARR_INT64)
        bytes = transfer(i, mold)
      case (ZARR_UINT8)
        if (i < 0 .or. i > 255) go to 910
        bytes = transfer(int(i, int16), mold, 1)
      case (ZARR_UINT16)
        if (i < 0 .or. i > 65535) go to 910
        bytes = transfer(int(i, int32), mold, 2)
      case (ZARR_UINT32)
        if (i < 0 .or. i > 4294967295_int64) go to 910
        bytes = transfer(i, mold, 4)
      case default
        if (i < 0) go to 910
        bytes = transfer(i, mold)
      end select
      ! the low-order bytes above are the first ones on a little-endian machine only
      if (t >= ZARR_UINT8 .and. t <= ZARR_UINT32 .and. transfer(1_int16, 0_int8) == 0_int8) &
        go to 920
    case (ZARR_FLOAT32)
      if (.not. (is_int .or. is_real)) go to 900
      bytes = transfer(real(r, real32), mold)
    case (ZARR_FLOAT64)
      if (.not. (is_int .or. is_real)) go to 900
      bytes = transfer(r, mold)
    case (ZARR_COMPLEX64)
      if (.not. (is_int .or. is_real .or. is_cplx)) go to 900
      bytes = transfer(cmplx(z, kind=real32), mold)
    case (ZARR_COMPLEX128)
      if (.not. (is_int .or. is_real .or. is_cplx)) go to 900
      bytes = transfer(z, mold)
    case default
      st = ZARR_ERR_UNSUPPORTED
      msg = 'fill= is supported for bool, integer, float32/64 and complex arrays only'
    end select
    return
900 st = ZARR_ERR_VALUE
    msg = 'fill= has a type that does not fit the array type (logical for bool, integer for integer types)'
    return
910 st = ZARR_ERR_VALUE
    msg = 'fill= is out of the range of the array type'
    return
920 st = ZARR_ERR_UNSUPPORTED
    msg = 'fill= for unsigned types needs a little-endian machine'
  end subroutine fill_bytes

  !> Builds a creation spec (include/zarr.h: zarr_array_spec_*) from the keyword arguments of create()
  !> and create_array(), reversing the Fortran-order extents into Zarr order. st /= ZARR_OK: msg says
  !> why, and no spec is left.
  subroutine make_spec(shape, type, chunks, shards, codec, level, shuffle, fill, dimension_names, &
                       attributes, zarr_format, spec, st, msg)
    class(*), intent(in) :: shape(:)
    integer, intent(in) :: type
    class(*), intent(in), optional :: chunks(:), shards(:), fill
    character(*), intent(in), optional :: codec, attributes
    integer, intent(in), optional :: level, shuffle, zarr_format
    character(*), intent(in), optional :: dimension_names(:)
    type(c_ptr), intent(out) :: spec
    integer, intent(out) :: st
    character(:), allocatable, intent(out) :: msg
    integer(int64), allocatable :: v(:), e(:)
    integer(c_int8_t), allocatable :: fb(:)
    integer(c_size_t) :: r
    logical :: ok
    integer :: k, lv
    type(c_ptr), allocatable :: names(:)
    type :: cname_t
      character(kind=c_char), allocatable :: s(:)
    end type cname_t
    type(cname_t), allocatable, target :: cnames(:)
    integer(c_int32_t) :: fst
    spec = c_null_ptr
    msg = ''
    call to_i64(shape, v, ok)
    if (.not. ok) then
      st = ZARR_ERR_INVALID_ARGUMENT; msg = 'shape= must be an integer vector'; return
    end if
    if (any(v < 0)) then
      st = ZARR_ERR_INVALID_ARGUMENT; msg = 'shape= has a negative extent'; return
    end if
    r = size(v, kind=c_size_t)
    st = c_zarr_array_spec_new(int(type, c_int), r, v(r:1:-1), spec)
    if (st /= ZARR_OK) go to 800
    if (present(chunks)) then
      call to_i64(chunks, e, ok)
      if (.not. ok .or. size(e) /= size(v) .or. any(e < 1)) then
        st = ZARR_ERR_INVALID_ARGUMENT; msg = 'chunks= must be one positive integer per dimension'; go to 810
      end if
      st = c_zarr_array_spec_set_chunks(spec, e(r:1:-1), r)
      if (st /= ZARR_OK) go to 800
    end if
    if (present(shards)) then
      call to_i64(shards, e, ok)
      if (.not. ok .or. size(e) /= size(v) .or. any(e < 1)) then
        st = ZARR_ERR_INVALID_ARGUMENT; msg = 'shards= must be one positive integer per dimension'; go to 810
      end if
      st = c_zarr_array_spec_set_shards(spec, e(r:1:-1), r)
      if (st /= ZARR_OK) go to 800
    end if
    if (present(codec) .or. present(level)) then
      lv = ZARR_LEVEL_DEFAULT
      if (present(level)) lv = level
      if (present(codec)) then
        st = c_zarr_array_spec_set_compressor(spec, c_str(trim(codec)), int(lv, c_int))
      else
        st = c_zarr_array_spec_set_compressor(spec, c_str('zstd'), int(lv, c_int))
      end if
      if (st /= ZARR_OK) go to 800
    end if
    if (present(shuffle)) then
      st = c_zarr_array_spec_set_shuffle(spec, int(shuffle, c_int))
      if (st /= ZARR_OK) go to 800
    end if
    if (present(fill)) then
      call fill_bytes(fill, type, fb, st, msg)
      if (st /= ZARR_OK) go to 810
      st = c_zarr_array_spec_set_fill_value(spec, fb, size(fb, kind=c_size_t))
      if (st /= ZARR_OK) go to 800
    end if
    if (present(dimension_names)) then
      if (size(dimension_names) /= size(v)) then
        st = ZARR_ERR_INVALID_ARGUMENT; msg = 'dimension_names= must have one name per dimension'; go to 810
      end if
      allocate(cnames(r), names(r))
      do k = 1, int(r)
        ! Zarr order: the last Fortran dimension comes first
        cnames(k)%s = c_str(trim(dimension_names(int(r) + 1 - k)))
        names(k) = c_loc(cnames(k)%s)
      end do
      st = c_zarr_array_spec_set_dimension_names(spec, names, r)
      if (st /= ZARR_OK) go to 800
    end if
    if (present(attributes)) then
      st = c_zarr_array_spec_set_attributes(spec, c_str(attributes))
      if (st /= ZARR_OK) go to 800
    end if
    if (present(zarr_format)) then
      st = c_zarr_array_spec_set_zarr_format(spec, int(zarr_format, c_int))
      if (st /= ZARR_OK) go to 800
    end if
    return
800 msg = f_str(c_zarr_status_name(int(st, c_int32_t))) // ': ' // f_str(c_zarr_last_error())
810 if (c_associated(spec)) fst = c_zarr_array_spec_free(spec)
    spec = c_null_ptr
  end subroutine make_spec

  !> Closes the handle (a closed handle: nothing to do). Writes are never buffered: everything
  !> written is stored already.
  subroutine zarr_array_close(self, stat, errmsg)
    class(zarr_array_t), intent(inout) :: self
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(c_int32_t) :: st
    st = ZARR_OK
    if (c_associated(self%handle)) st = c_zarr_close(self%handle)
    self%handle = c_null_ptr
    call zarr_check(st, 'close', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_array_close

  !> Whether the handle is open.
  logical function zarr_array_is_open(self)
    class(zarr_array_t), intent(in) :: self
    zarr_array_is_open = c_associated(self%handle)
  end function zarr_array_is_open

  !> The C handle (struct zarr_array *, c_null_ptr when not open), for companion modules and C code
  !> (the module zarr_mpi passes it to libzarr_mpi). It stays owned by this object: do not close it in C.
  function zarr_array_c_handle(self) result(h)
    class(zarr_array_t), intent(in) :: self
    type(c_ptr) :: h
    h = self%handle
  end function zarr_array_c_handle

  !> Makes this object the owner of an open C handle (from zarr_open() and the like in C, or from the
  !> module zarr_mpi); close() then closes it. The object must not be open already
  !> (ZARR_ERR_INVALID_ARGUMENT), and `h` must not be NULL (ZARR_ERR_INVALID_HANDLE).
  subroutine zarr_array_adopt_c_handle(self, h, stat, errmsg)
    class(zarr_array_t), intent(inout) :: self
    type(c_ptr), intent(in) :: h
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    if (c_associated(self%handle)) then
      call zarr_fail(ZARR_ERR_INVALID_ARGUMENT, 'adopt_c_handle: the handle is open already', stat, zmsg)
    else if (.not. c_associated(h)) then
      call zarr_fail(ZARR_ERR_INVALID_HANDLE, 'adopt_c_handle: a NULL handle', stat, zmsg)
    else
      self%handle = h
      call zarr_check(int(ZARR_OK, c_int32_t), 'adopt_c_handle', stat, zmsg)
    end if
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_array_adopt_c_handle

  !> Hands the C handle over to the caller without closing it (`h`: c_null_ptr when not open); the object
  !> is then closed. The inverse of adopt_c_handle(): the caller now owns `h` (close it with zarr_close()
  !> or give it back with adopt_c_handle()).
  subroutine zarr_array_release_c_handle(self, h)
    class(zarr_array_t), intent(inout) :: self
    type(c_ptr), intent(out) :: h
    h = self%handle
    self%handle = c_null_ptr
  end subroutine zarr_array_release_c_handle

  !> The number of dimensions (0 on failure).
  integer function zarr_array_rank(self, stat, errmsg) result(r)
    class(zarr_array_t), intent(in) :: self
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(c_size_t) :: n
    r = 0
    if (not_open(self%handle, 'rank', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    n = 0
    call zarr_check(c_zarr_array_rank(self%handle, n), 'rank', stat, zmsg)
    r = int(n)
    if (present(errmsg)) errmsg = zmsg
  end function zarr_array_rank

  !> One of the three shape queries, reversed into Fortran order (empty on failure).
  function array_extents(self, which, stat, errmsg) result(s)
    class(zarr_array_t), intent(in) :: self
    character(*), intent(in) :: which
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(inout) :: errmsg
    integer(int64), allocatable :: s(:)
    integer(c_int64_t), allocatable :: z(:)
    integer(c_size_t) :: n
    integer(c_int32_t) :: st
    allocate(s(0))
    if (not_open(self%handle, which, stat, errmsg)) return
    st = c_zarr_array_rank(self%handle, n)
    if (st == ZARR_OK) then
      allocate(z(n))
      select case (which)
      case ('shape')
        st = c_zarr_array_shape(self%handle, z, n)
      case ('chunk_shape')
        st = c_zarr_array_chunk_shape(self%handle, z, n)
      case default
        st = c_zarr_array_inner_chunk_shape(self%handle, z, n)
      end select
      if (st == ZARR_OK) s = int(z(n:1:-1), int64)
    end if
    call zarr_check(st, which, stat, errmsg)
  end function array_extents

  !> The shape in Fortran order: A(nx, ny, nz) for the Zarr shape [nz, ny, nx].
  function zarr_array_shape(self, stat, errmsg) result(s)
    class(zarr_array_t), intent(in) :: self
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(int64), allocatable :: s(:)
    zmsg = ''
    s = array_extents(self, 'shape', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end function zarr_array_shape

  !> The chunk shape in Fortran order (for a sharded array: the shard shape).
  function zarr_array_chunk_shape(self, stat, errmsg) result(s)
    class(zarr_array_t), intent(in) :: self
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(int64), allocatable :: s(:)
    zmsg = ''
    s = array_extents(self, 'chunk_shape', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end function zarr_array_chunk_shape

  !> The inner chunk shape of a sharded array in Fortran order (else the chunk shape).
  function zarr_array_inner_chunk_shape(self, stat, errmsg) result(s)
    class(zarr_array_t), intent(in) :: self
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(int64), allocatable :: s(:)
    zmsg = ''
    s = array_extents(self, 'inner_chunk_shape', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end function zarr_array_inner_chunk_shape

  !> The element type: ZARR_INT16, ZARR_FLOAT64, ... (-1 on failure).
  integer function zarr_array_data_type(self, stat, errmsg) result(t)
    class(zarr_array_t), intent(in) :: self
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(c_int) :: ct
    integer(c_size_t) :: n
    t = -1
    if (not_open(self%handle, 'data_type', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    call zarr_check(c_zarr_array_data_type(self%handle, ct, n), 'data_type', stat, zmsg)
    t = int(ct)
    if (present(errmsg)) errmsg = zmsg
  end function zarr_array_data_type

  !> Bytes per stored element (0 on failure).
  integer function zarr_array_element_size(self, stat, errmsg) result(sz)
    class(zarr_array_t), intent(in) :: self
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(c_int) :: ct
    integer(c_size_t) :: n
    sz = 0
    n = 0
    if (not_open(self%handle, 'element_size', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    call zarr_check(c_zarr_array_data_type(self%handle, ct, n), 'element_size', stat, zmsg)
    sz = int(n)
    if (present(errmsg)) errmsg = zmsg
  end function zarr_array_element_size

  !> The Zarr format of the array's metadata: 3, or 2.
  integer function zarr_array_zarr_format(self, stat, errmsg) result(f)
    class(zarr_array_t), intent(in) :: self
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(c_int) :: cf
    f = 0
    if (not_open(self%handle, 'zarr_format', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    call zarr_check(c_zarr_array_zarr_format(self%handle, cf), 'zarr_format', stat, zmsg)
    f = int(cf)
    if (present(errmsg)) errmsg = zmsg
  end function zarr_array_zarr_format

  !> The name of Fortran dimension `dim` (1-based, Fortran order), '' when it has none.
  function zarr_array_dimension_name(self, dim, stat, errmsg) result(name)
    class(zarr_array_t), intent(in) :: self
    integer, intent(in) :: dim
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    character(:), allocatable :: name
    integer :: r
    integer(c_int32_t) :: st
    type(c_ptr) :: p
    name = ''
    r = self%rank(stat, zmsg)
    if (present(stat)) then
      if (stat /= ZARR_OK) then
        if (present(errmsg)) errmsg = zmsg
        return
      end if
    end if
    if (dim < 1 .or. dim > r) then
      call zarr_fail(ZARR_ERR_INVALID_ARGUMENT, 'dimension_name: dimension ' // itoa(int(dim, c_int64_t)) // &
                     ' of a rank-' // itoa(int(r, c_int64_t)) // ' array', stat, zmsg)
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    st = c_zarr_array_dimension_name(self%handle, int(r - dim, c_size_t), p)
    if (st == ZARR_OK) name = take_str(p)
    call zarr_check(st, 'dimension_name', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end function zarr_array_dimension_name

  !> The user attributes as JSON object text.
  function zarr_array_attributes(self, stat, errmsg) result(json)
    class(zarr_array_t), intent(in) :: self
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    character(:), allocatable :: json
    integer(c_int32_t) :: st
    type(c_ptr) :: p
    json = ''
    if (not_open(self%handle, 'attributes', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    st = c_zarr_array_attributes(self%handle, p)
    if (st == ZARR_OK) json = take_str(p)
    call zarr_check(st, 'attributes', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end function zarr_array_attributes

  !> Replaces the user attributes with the JSON object `json` (needs ZARR_READ_WRITE).
  subroutine zarr_array_set_attributes(self, json, stat, errmsg)
    class(zarr_array_t), intent(inout) :: self
    character(*), intent(in) :: json
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    if (not_open(self%handle, 'set_attributes', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    call zarr_check(c_zarr_array_set_attributes(self%handle, c_str(json)), 'set_attributes', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_array_set_attributes

  !> The whole metadata document (zarr.json or .zarray) as JSON text, in Zarr's dimension order.
  function zarr_array_metadata(self, stat, errmsg) result(json)
    class(zarr_array_t), intent(in) :: self
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    character(:), allocatable :: json
    integer(c_int32_t) :: st
    type(c_ptr) :: p
    json = ''
    if (not_open(self%handle, 'metadata', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    st = c_zarr_array_metadata(self%handle, p)
    if (st == ZARR_OK) json = take_str(p)
    call zarr_check(st, 'metadata', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end function zarr_array_metadata

  !> Changes the shape (given in Fortran order; the rank stays). Needs ZARR_READ_WRITE.
  !> Growing after shrinking shows the old values of the chunks the smaller edge cut through (as
  !> zarr_array_resize() in zarr.h says); to have the fill value in the whole grown part, write it there
  !> after growing, one write per grown dimension:
  !>   call a%resize([nx_big, ny])                     ! grown from nx_small
  !>   allocate(f(nx_big - nx_small, ny)); f = fill    ! the array's fill value
  !>   call a%write(f, start=[nx_small + 1, 1])
  subroutine zarr_array_resize_i8(self, new_shape, stat, errmsg)
    class(zarr_array_t), intent(inout) :: self
    integer(int64), intent(in) :: new_shape(:)
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(c_int64_t) :: z(size(new_shape))
    if (not_open(self%handle, 'resize', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    if (any(new_shape < 0)) then
      call zarr_fail(ZARR_ERR_INVALID_ARGUMENT, 'resize: negative extent', stat, zmsg)
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    z = int(new_shape(size(new_shape):1:-1), c_int64_t)
    call zarr_check(c_zarr_array_resize(self%handle, z, int(size(z), c_size_t)), 'resize', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_array_resize_i8

  !> resize() with default-kind integer extents.
  subroutine zarr_array_resize_i4(self, new_shape, stat, errmsg)
    class(zarr_array_t), intent(inout) :: self
    integer(int32), intent(in) :: new_shape(:)
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    call zarr_array_resize_i8(self, int(new_shape, int64), stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_array_resize_i4

  !> The engine behind every read/write specific: `p` is the buffer's first element, `ext` its shape
  !> and `bstride` the bytes between neighbours along each of its dimensions (0 where the extent is
  !> 1). Works out the selection and the buffer layout in Fortran order, reverses both into Zarr's
  !> order and calls zarr_read_hyperslab / zarr_write_hyperslab on the caller's memory.
  subroutine zarr_transfer(self, writing, p, btype, esize, ext, bstride, what, start, count, stride, stat, errmsg)
    class(zarr_array_t), intent(in) :: self
    logical, intent(in) :: writing
    type(c_ptr), intent(in) :: p
    integer, intent(in) :: btype
    integer(c_size_t), intent(in) :: esize
    integer(c_int64_t), intent(in) :: ext(:), bstride(:)
    character(*), intent(in) :: what
    integer, intent(in), optional :: start(:), count(:), stride(:)
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(inout) :: errmsg
    integer(c_int64_t), allocatable :: fs(:), fc(:), fst(:), fbs(:)
    integer(c_int64_t) :: expect, need, have, es
    integer(c_size_t) :: nr_c, nbytes
    integer(c_int32_t) :: st, st_order
    integer(c_int) :: previous_order, ignored_order
    integer :: r, nr, d

    if (not_open(self%handle, what, stat, errmsg)) return
    st = c_zarr_array_rank(self%handle, nr_c)
    if (st /= ZARR_OK) then
      call zarr_check(st, what, stat, errmsg)
      return
    end if
    nr = int(nr_c)
    r = size(ext)
    es = int(esize, c_int64_t)
    if (r > nr) then
      call bad('a rank-' // itoa(int(r, c_int64_t)) // ' buffer for a rank-' // itoa(int(nr, c_int64_t)) // ' array')
      return
    end if
    allocate(fs(nr), fc(nr), fst(nr), fbs(nr))
    fs = 1
    fst = 1
    if (present(start)) then
      if (size(start) /= nr) then
        call bad('start has ' // itoa(int(size(start), c_int64_t)) // ' values; the array has rank ' // &
                 itoa(int(nr, c_int64_t)))
        return
      end if
      if (any(start < 1)) then
        call bad('start indices are 1-based (at least 1)')
        return
      end if
      fs = start
    end if
    if (present(stride)) then
      if (size(stride) /= nr) then
        call bad('stride has ' // itoa(int(size(stride), c_int64_t)) // ' values; the array has rank ' // &
                 itoa(int(nr, c_int64_t)))
        return
      end if
      if (any(stride < 1)) then
        call bad('stride values must be at least 1')
        return
      end if
      fst = stride
    end if
    if (present(count)) then
      if (size(count) /= nr) then
        call bad('count has ' // itoa(int(size(count), c_int64_t)) // ' values; the array has rank ' // &
                 itoa(int(nr, c_int64_t)))
        return
      end if
      if (any(count < 0)) then
        call bad('count values must not be negative')
        return
      end if
      fc = count
    else
      fc(1:r) = ext
      fc(r + 1:nr) = 1
    end if

    fbs = 0
    if (all(fc(1:r) == ext) .and. all(fc(r + 1:nr) == 1)) then
      ! The selection has the buffer's shape: element (i, j, ..) goes to buf(i, j, ..), wherever the
      ! (possibly non-contiguous) buffer keeps it.
      do d = 1, r
        if (ext(d) > 1) then
          if (bstride(d) <= 0 .or. mod(bstride(d), es) /= 0) then
            call bad('the buffer is an array section with a negative or irregular stride along dimension ' // &
                     itoa(int(d, c_int64_t)) // ': pass a contiguous array or a section with positive strides')
            return
          end if
          fbs(d) = bstride(d) / es
        end if
      end do
    else
      ! Another shape: the first product(count) elements of a contiguous buffer, in array element order.
      expect = es
      do d = 1, r
        if (ext(d) > 1 .and. bstride(d) /= expect) then
          call bad('count differs from the shape of the buffer, which must then be contiguous (not an array section)')
          return
        end if
        expect = expect * ext(d)
      end do
      need = product(fc)
      have = product(ext)
      if (need > have) then
        call bad('count selects ' // itoa(need) // ' elements; the buffer holds ' // itoa(have))
        return
      end if
      expect = 1
      do d = 1, nr
        fbs(d) = expect
        expect = expect * fc(d)
      end do
    end if
    if (any(fc == 0)) then
      nbytes = 0
    else
      nbytes = int((sum((fc - 1) * fbs) + 1) * es, c_size_t)
    end if

    ! Zarr order: reversed, 0-based.
    fs = fs(nr:1:-1) - 1
    fc = fc(nr:1:-1)
    fst = fst(nr:1:-1)
    fbs = fbs(nr:1:-1)
    ! The library's messages quote the selection as the caller wrote it: Fortran order, 1-based
    ! (zarr_set_message_index_order(), per thread; the caller's own setting is put back after).
    st_order = c_zarr_set_message_index_order(ZARR_INDEX_ORDER_FORTRAN, previous_order)
    if (writing) then
      st = c_zarr_write_hyperslab(self%handle, fs, fc, fst, fbs, int(btype, c_int), p, nbytes)
    else
      st = c_zarr_read_hyperslab(self%handle, fs, fc, fst, fbs, int(btype, c_int), p, nbytes)
    end if
    if (st_order == ZARR_OK) st_order = c_zarr_set_message_index_order(previous_order, ignored_order)
    call zarr_check(st, what, stat, errmsg)

  contains

    subroutine bad(msg)
      character(*), intent(in) :: msg
      call zarr_fail(ZARR_ERR_INVALID_ARGUMENT, what // ': ' // msg, stat, errmsg)
    end subroutine bad

  end subroutine zarr_transfer

  ! ---- zarr_group_t ------------------------------------------------------------------------------

  !> Opens the group stored in the directory `path`; `mode` ZARR_READ (default) or ZARR_READ_WRITE.
  subroutine zarr_group_open(self, path, mode, stat, errmsg)
    class(zarr_group_t), intent(inout) :: self
    character(*), intent(in) :: path
    integer, intent(in), optional :: mode
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(c_int32_t) :: m
    if (c_associated(self%handle)) then
      call zarr_fail(ZARR_ERR_INVALID_ARGUMENT, 'open(' // trim(path) // '): the handle is open already', stat, zmsg)
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    m = ZARR_READ
    if (present(mode)) m = int(mode, c_int32_t)
    call zarr_check(c_zarr_group_open(c_str(trim(path)), m, self%handle), 'open(' // trim(path) // ')', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_group_open

  !> Creates a group in the directory `path` and opens it for reading and writing. `attributes`: a
  !> JSON object (default none); `zarr_format`: 3 (default) or 2.
  subroutine zarr_group_create(self, path, attributes, zarr_format, stat, errmsg)
    class(zarr_group_t), intent(inout) :: self
    character(*), intent(in) :: path
    character(*), intent(in), optional :: attributes
    integer, intent(in), optional :: zarr_format
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    character(kind=c_char), allocatable, target :: attrs(:)
    type(c_ptr) :: pa
    integer(c_int) :: fmt
    if (c_associated(self%handle)) then
      call zarr_fail(ZARR_ERR_INVALID_ARGUMENT, 'create(' // trim(path) // '): the handle is open already', &
                     stat, zmsg)
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    pa = c_null_ptr
    if (present(attributes)) then
      allocate(attrs(len(attributes) + 1))
      attrs = c_str(attributes)
      pa = c_loc(attrs)
    end if
    fmt = 3
    if (present(zarr_format)) fmt = int(zarr_format, c_int)
    call zarr_check(c_zarr_group_create_ex(c_str(trim(path)), pa, fmt, self%handle), 'create(' // trim(path) // ')', &
                    stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_group_create

  !> Closes the handle (a closed handle: nothing to do). Arrays and groups opened through it stay open.
  subroutine zarr_group_close(self, stat, errmsg)
    class(zarr_group_t), intent(inout) :: self
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(c_int32_t) :: st
    st = ZARR_OK
    if (c_associated(self%handle)) st = c_zarr_group_close(self%handle)
    self%handle = c_null_ptr
    call zarr_check(st, 'close', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_group_close

  !> Whether the handle is open.
  logical function zarr_group_is_open(self)
    class(zarr_group_t), intent(in) :: self
    zarr_group_is_open = c_associated(self%handle)
  end function zarr_group_is_open

  !> The Zarr format of the group's metadata: 3 or 2.
  integer function zarr_group_zarr_format(self, stat, errmsg) result(f)
    class(zarr_group_t), intent(in) :: self
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(c_int) :: cf
    f = 0
    if (not_open(self%handle, 'zarr_format', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    call zarr_check(c_zarr_group_zarr_format(self%handle, cf), 'zarr_format', stat, zmsg)
    f = int(cf)
    if (present(errmsg)) errmsg = zmsg
  end function zarr_group_zarr_format

  !> The group's attributes as JSON object text.
  function zarr_group_attributes(self, stat, errmsg) result(json)
    class(zarr_group_t), intent(in) :: self
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    character(:), allocatable :: json
    integer(c_int32_t) :: st
    type(c_ptr) :: p
    json = ''
    if (not_open(self%handle, 'attributes', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    st = c_zarr_group_attributes(self%handle, p)
    if (st == ZARR_OK) json = take_str(p)
    call zarr_check(st, 'attributes', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end function zarr_group_attributes

  !> Replaces the group's attributes with the JSON object `json` (needs ZARR_READ_WRITE).
  subroutine zarr_group_set_attributes(self, json, stat, errmsg)
    class(zarr_group_t), intent(inout) :: self
    character(*), intent(in) :: json
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    if (not_open(self%handle, 'set_attributes', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    call zarr_check(c_zarr_group_set_attributes(self%handle, c_str(json)), 'set_attributes', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_group_set_attributes

  !> Icechunk: commits the changes of the session the group belongs to (a group opened from an
  !> `icechunk://` location of a branch) with `message`; returns the new snapshot's id ('' on failure).
  !> `rebase` (default .false.): rebase onto another writer's commit when the changes do not conflict.
  !> Another writer's commit first: `stat` = ZARR_ERR_CONFLICT, the session keeps its changes.
  function zarr_group_icechunk_commit(self, message, rebase, stat, errmsg) result(snapshot_id)
    class(zarr_group_t), intent(inout) :: self
    character(*), intent(in) :: message
    logical, intent(in), optional :: rebase
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    character(:), allocatable :: snapshot_id
    integer(c_int32_t) :: st
    integer(c_int) :: flags
    type(c_ptr) :: p
    snapshot_id = ''
    if (not_open(self%handle, 'icechunk_commit', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    flags = 0
    if (present(rebase)) then
      if (rebase) flags = 1
    end if
    st = c_zarr_icechunk_commit(self%handle, c_str(message), flags, p)
    if (st == ZARR_OK) snapshot_id = take_str(p)
    call zarr_check(st, 'icechunk_commit', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end function zarr_group_icechunk_commit

  !> Icechunk: drops the uncommitted changes of the session the group belongs to; the session
  !> continues at the branch's current tip.
  subroutine zarr_group_icechunk_discard(self, stat, errmsg)
    class(zarr_group_t), intent(inout) :: self
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    if (not_open(self%handle, 'icechunk_discard', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    call zarr_check(c_zarr_icechunk_discard(self%handle), 'icechunk_discard', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_group_icechunk_discard

  !> The group's metadata document as JSON text.
  function zarr_group_metadata(self, stat, errmsg) result(json)
    class(zarr_group_t), intent(in) :: self
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    character(:), allocatable :: json
    integer(c_int32_t) :: st
    type(c_ptr) :: p
    json = ''
    if (not_open(self%handle, 'metadata', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    st = c_zarr_group_metadata(self%handle, p)
    if (st == ZARR_OK) json = take_str(p)
    call zarr_check(st, 'metadata', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end function zarr_group_metadata

  !> The group's direct children, sorted by name: `names` (each padded with blanks to the longest
  !> name; use trim()) and, optionally, `kinds` (ZARR_NODE_ARRAY or ZARR_NODE_GROUP).
  subroutine zarr_group_list(self, names, kinds, stat, errmsg)
    class(zarr_group_t), intent(in) :: self
    character(:), allocatable, intent(out) :: names(:)
    integer, allocatable, intent(out), optional :: kinds(:)
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    type(c_ptr) :: list, pname
    integer(c_size_t) :: n, i
    integer(c_int) :: t
    integer(c_int32_t) :: st
    integer :: longest
    allocate(character(len=0) :: names(0))
    if (present(kinds)) allocate(kinds(0))
    if (not_open(self%handle, 'list', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    st = c_zarr_group_list(self%handle, list)
    if (st == ZARR_OK) st = c_zarr_node_list_size(list, n)
    if (st == ZARR_OK) then
      longest = 0
      do i = 1, n
        st = c_zarr_node_list_get(list, i - 1, pname, t)
        if (st /= ZARR_OK) exit
        longest = max(longest, int(c_strlen(pname)))
      end do
    end if
    if (st == ZARR_OK) then
      deallocate(names)
      allocate(character(len=longest) :: names(n))
      if (present(kinds)) then
        deallocate(kinds)
        allocate(kinds(n))
      end if
      do i = 1, n
        st = c_zarr_node_list_get(list, i - 1, pname, t)
        if (st /= ZARR_OK) exit
        names(i) = f_str(pname)
        if (present(kinds)) kinds(i) = int(t)
      end do
    end if
    if (c_associated(list)) then
      if (c_zarr_node_list_free(list) /= ZARR_OK .and. st == ZARR_OK) st = ZARR_ERR_INTERNAL
    end if
    call zarr_check(st, 'list', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_group_list

  !> Opens the array `name` below the group ("a" or a relative path "a/b") into `array`, with the
  !> group's access mode.
  subroutine zarr_group_open_array(self, name, array, stat, errmsg)
    class(zarr_group_t), intent(in) :: self
    character(*), intent(in) :: name
    type(zarr_array_t), intent(inout) :: array
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    if (not_open(self%handle, 'open_array(' // trim(name) // ')', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    if (c_associated(array%handle)) then
      call zarr_fail(ZARR_ERR_INVALID_ARGUMENT, 'open_array(' // trim(name) // '): the array handle is open already', &
                     stat, zmsg)
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    call zarr_check(c_zarr_group_open_array(self%handle, c_str(trim(name)), array%handle), &
                    'open_array(' // trim(name) // ')', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_group_open_array

  !> Creates the array `name` below the group from a complete metadata document (JSON, Zarr order).
  subroutine zarr_group_create_array_json(self, name, array, metadata_json, stat, errmsg)
    class(zarr_group_t), intent(inout) :: self
    character(*), intent(in) :: name, metadata_json
    type(zarr_array_t), intent(inout) :: array
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    if (not_open(self%handle, 'create_array(' // trim(name) // ')', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    if (c_associated(array%handle)) then
      call zarr_fail(ZARR_ERR_INVALID_ARGUMENT, 'create_array(' // trim(name) // &
                     '): the array handle is open already', stat, zmsg)
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    call zarr_check(c_zarr_group_create_array(self%handle, c_str(trim(name)), c_str(metadata_json), array%handle), &
                    'create_array(' // trim(name) // ')', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_group_create_array_json

  !> Creates the array `name` below the group into `array` from keywords (as zarr_array_t%create();
  !> without zarr_format= the array takes the group's format).
  subroutine zarr_group_create_array_kw(self, name, array, shape, type, chunks, shards, codec, level, shuffle, &
                                        fill, dimension_names, attributes, zarr_format, stat, errmsg)
    class(zarr_group_t), intent(inout) :: self
    character(*), intent(in) :: name
    type(zarr_array_t), intent(inout) :: array
    class(*), intent(in) :: shape(:)
    integer, intent(in) :: type
    class(*), intent(in), optional :: chunks(:), shards(:), fill
    character(*), intent(in), optional :: codec, attributes
    integer, intent(in), optional :: level, shuffle, zarr_format
    character(*), intent(in), optional :: dimension_names(:)
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg, msg
    type(c_ptr) :: spec
    integer :: st
    integer(c_int32_t) :: fst
    if (not_open(self%handle, 'create_array(' // trim(name) // ')', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    if (c_associated(array%handle)) then
      call zarr_fail(ZARR_ERR_INVALID_ARGUMENT, 'create_array(' // trim(name) // &
                     '): the array handle is open already', stat, zmsg)
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    call make_spec(shape, type, chunks, shards, codec, level, shuffle, fill, dimension_names, attributes, &
                   zarr_format, spec, st, msg)
    if (st /= ZARR_OK) then
      call zarr_fail(st, 'create_array(' // trim(name) // '): ' // msg, stat, zmsg)
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    st = c_zarr_group_create_array_from_spec(self%handle, c_str(trim(name)), spec, array%handle)
    fst = c_zarr_array_spec_free(spec)
    call zarr_check(int(st, c_int32_t), 'create_array(' // trim(name) // ')', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_group_create_array_kw

  !> Opens the group `name` below the group into `group`.
  subroutine zarr_group_open_group(self, name, group, stat, errmsg)
    class(zarr_group_t), intent(in) :: self
    character(*), intent(in) :: name
    type(zarr_group_t), intent(inout) :: group
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    if (not_open(self%handle, 'open_group(' // trim(name) // ')', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    if (c_associated(group%handle)) then
      call zarr_fail(ZARR_ERR_INVALID_ARGUMENT, 'open_group(' // trim(name) // '): the group handle is open already', &
                     stat, zmsg)
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    call zarr_check(c_zarr_group_open_group(self%handle, c_str(trim(name)), group%handle), &
                    'open_group(' // trim(name) // ')', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_group_open_group

  !> Creates the group `name` below the group (with `attributes`, a JSON object, if given) into `group`.
  subroutine zarr_group_create_group(self, name, group, attributes, stat, errmsg)
    class(zarr_group_t), intent(inout) :: self
    character(*), intent(in) :: name
    type(zarr_group_t), intent(inout) :: group
    character(*), intent(in), optional :: attributes
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    character(kind=c_char), allocatable, target :: attrs(:)
    type(c_ptr) :: pa
    if (not_open(self%handle, 'create_group(' // trim(name) // ')', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    if (c_associated(group%handle)) then
      call zarr_fail(ZARR_ERR_INVALID_ARGUMENT, 'create_group(' // trim(name) // &
                     '): the group handle is open already', stat, zmsg)
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    pa = c_null_ptr
    if (present(attributes)) then
      allocate(attrs(len(attributes) + 1))
      attrs = c_str(attributes)
      pa = c_loc(attrs)
    end if
    call zarr_check(c_zarr_group_create_group(self%handle, c_str(trim(name)), pa, group%handle), &
                    'create_group(' // trim(name) // ')', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_group_create_group

  !> Deletes the array or group `name` (a relative path) below the group, with everything below it.
  subroutine zarr_group_delete_member(self, name, stat, errmsg)
    class(zarr_group_t), intent(inout) :: self
    character(*), intent(in) :: name
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    if (not_open(self%handle, 'delete_member(' // trim(name) // ')', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    call zarr_check(c_zarr_group_delete_member(self%handle, c_str(trim(name))), &
                    'delete_member(' // trim(name) // ')', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_group_delete_member

  !> Moves (renames) the array or group `from` (a relative path) below the group, with everything below
  !> it, to the relative path `to`, whose parent group must exist and where nothing is stored yet.
  subroutine zarr_group_move_member(self, from, to, stat, errmsg)
    class(zarr_group_t), intent(inout) :: self
    character(*), intent(in) :: from, to
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    if (not_open(self%handle, 'move_member(' // trim(from) // ', ' // trim(to) // ')', stat, zmsg)) then
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    call zarr_check(c_zarr_group_move_member(self%handle, c_str(trim(from)), c_str(trim(to))), &
                    'move_member(' // trim(from) // ', ' // trim(to) // ')', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_group_move_member

  ! ---- read / write: the generated specifics (fortran/gen_zarr_module.py) ---------------------------
  include 'zarr_rw_procs.inc'

end module zarr
