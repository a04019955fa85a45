! The Fortran side of tests/interop/fortran_interop.py (which compares everything with zarr-python):
!
!   zarr_fortran_test write DIR   writes arrays, groups and attributes under DIR with the module zarr;
!                                 the driver then reads them with zarr-python and compares with numpy
!   zarr_fortran_test read DIR    reads what the driver wrote with zarr-python under DIR and checks every
!                                 value against the same formulas, plus the module's error reporting;
!                                 prints "<n> passed, <m> failed" and exits 1 on a failure
!   zarr_fortran_test die DIR     opens a missing array without stat: must stop with the library's message
!
! Values: the element with 0-based linear index L (Fortran array element order, which is C order of the
! reversed Zarr shape) holds value(L), one formula per type (the driver has the same formulas).
program zarr_fortran_test
  use, intrinsic :: iso_c_binding, only: c_bool
  use, intrinsic :: iso_fortran_env, only: int8, int16, int32, int64, real32, real64
  use zarr
  implicit none

  character(len=1024) :: mode, dir
  integer :: passed = 0, failed = 0

  call get_command_argument(1, mode)
  call get_command_argument(2, dir)
  select case (trim(mode))
  case ('write')
    call do_write()
  case ('read')
    call do_read()
  case ('die')
    call do_die()
  case ('icechunk')
    call do_icechunk()
  case default
    print '(a)', 'usage: zarr_fortran_test write|read|die|icechunk DIR'
    stop 2
  end select
  print '(i0, a, i0, a)', passed, ' passed, ', failed, ' failed'
  if (failed > 0) error stop 1

contains

  subroutine check(ok, name)
    logical, intent(in) :: ok
    character(*), intent(in) :: name
    if (ok) then
      passed = passed + 1
    else
      failed = failed + 1
      print '(a)', 'FAIL ' // name
    end if
  end subroutine check

  function p(name) result(path)
    character(*), intent(in) :: name
    character(:), allocatable :: path
    path = trim(dir) // '/' // name
  end function p

  ! ---- the value formulas (fortran_interop.py: VALUES) ----
  elemental integer(int8) function v_i1(l)
    integer(int64), intent(in) :: l
    v_i1 = int(mod(l * 7, 251_int64) - 125, int8)
  end function v_i1
  elemental integer(int16) function v_i2(l)
    integer(int64), intent(in) :: l
    v_i2 = int(mod(l * 31, 60001_int64) - 30000, int16)
  end function v_i2
  elemental integer(int32) function v_i4(l)
    integer(int64), intent(in) :: l
    v_i4 = int(l * 100003 - 2000000, int32)
  end function v_i4
  elemental integer(int64) function v_i8(l)
    integer(int64), intent(in) :: l
    v_i8 = l * 3000000019_int64 - 7
  end function v_i8
  elemental real(real32) function v_r4(l)
    integer(int64), intent(in) :: l
    v_r4 = real(l, real32) * 0.25_real32 - 3.5_real32
  end function v_r4
  elemental real(real64) function v_r8(l)
    integer(int64), intent(in) :: l
    v_r8 = real(l - 17, real64) / 8.0_real64
  end function v_r8
  elemental complex(real32) function v_c4(l)
    integer(int64), intent(in) :: l
    v_c4 = cmplx(real(l, real32) * 0.5_real32, -real(l, real32) * 0.25_real32, real32)
  end function v_c4
  elemental complex(real64) function v_c8(l)
    integer(int64), intent(in) :: l
    v_c8 = cmplx(real(l, real64) * 1.5_real64, real(l, real64) - 1000.0_real64, real64)
  end function v_c8
  elemental logical function v_b(l)
    integer(int64), intent(in) :: l
    v_b = mod(l, 3_int64) == 0
  end function v_b

  function lin(n) result(l)
    integer, intent(in) :: n
    integer(int64) :: l(n)
    integer :: i
    l = [(int(i, int64), i = 0, n - 1)]
  end function lin

  !> A v3 metadata document; `fshape`/`fchunks` in Fortran order (written reversed).
  function meta(dtype, fshape, fchunks, extra) result(json)
    character(*), intent(in) :: dtype
    integer, intent(in) :: fshape(:), fchunks(:)
    character(*), intent(in), optional :: extra
    character(:), allocatable :: json
    json = '{"zarr_format": 3, "node_type": "array", "shape": ' // ints(fshape(size(fshape):1:-1)) // &
      ', "data_type": "' // dtype // '", "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": ' // &
      ints(fchunks(size(fchunks):1:-1)) // '}}, "chunk_key_encoding": {"name": "default"}, "fill_value": ' // &
      fill(dtype) // ', "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, ' // &
      '{"name": "zstd", "configuration": {"level": 1, "checksum": false}}]'
    if (present(extra)) json = json // ', ' // extra
    json = json // '}'
  end function meta

  function fill(dtype) result(s)
    character(*), intent(in) :: dtype
    character(:), allocatable :: s
    select case (dtype)
    case ('bool')
      s = 'false'
    case ('complex64', 'complex128')
      s = '[0.0, 0.0]'
    case default
      s = '0'
    end select
  end function fill

  function ints(a) result(s)
    integer, intent(in) :: a(:)
    character(:), allocatable :: s
    character(24) :: b
    integer :: i
    s = '['
    do i = 1, size(a)
      write(b, '(i0)') a(i)
      s = s // trim(b)
      if (i < size(a)) s = s // ', '
    end do
    s = s // ']'
  end function ints

  !> Creates `name` from meta(...), failing the test on error.
  subroutine make(a, name, dtype, fshape, fchunks, extra)
    type(zarr_array_t), intent(inout) :: a
    character(*), intent(in) :: name, dtype
    integer, intent(in) :: fshape(:), fchunks(:)
    character(*), intent(in), optional :: extra
    integer :: st
    character(:), allocatable :: msg
    call a%create(p(name), meta(dtype, fshape, fchunks, extra), stat=st, errmsg=msg)
    call check(st == ZARR_OK, 'create ' // name // ': ' // msg)
  end subroutine make

  ! =================================================================================================
  subroutine do_write()
    type(zarr_array_t) :: a
    type(zarr_group_t) :: g, sub
    integer, parameter :: s7(7) = [5, 4, 3, 2, 2, 2, 2], c7(7) = [3, 2, 2, 1, 2, 1, 2]
    real(real64), target :: flat(960)
    real(real64), pointer :: p1(:), p2(:,:), p3(:,:,:), p4(:,:,:,:), p5(:,:,:,:,:), p6(:,:,:,:,:,:), &
      p7(:,:,:,:,:,:,:)
    integer(int8), allocatable :: b1(:,:,:)
    integer(int16), allocatable :: b2(:,:,:)
    integer(int32), allocatable :: b4(:,:,:)
    integer(int32) :: two(2)
    integer(int64), allocatable :: b8(:,:,:)
    real(real32), allocatable :: f4(:,:,:)
    real(real64), allocatable :: f8(:,:,:), big(:,:), conv(:,:)
    complex(real32), allocatable :: z4(:,:,:)
    complex(real64), allocatable :: z8(:,:,:)
    logical, allocatable :: l3(:,:,:)
    logical(c_bool), allocatable :: lb(:,:)
    integer :: st, i, j
    character(:), allocatable :: msg

    ! Ranks 0..7 (float64): element L of each is v_r8(L).
    flat = v_r8(lin(960))
    call make(a, 'rank0', 'float64', [integer ::], [integer ::])
    call a%write(flat(18))
    call a%close()
    p1(1:5) => flat
    p2(1:5, 1:4) => flat
    p3(1:5, 1:4, 1:3) => flat
    p4(1:5, 1:4, 1:3, 1:2) => flat
    p5(1:5, 1:4, 1:3, 1:2, 1:2) => flat
    p6(1:5, 1:4, 1:3, 1:2, 1:2, 1:2) => flat
    p7(1:5, 1:4, 1:3, 1:2, 1:2, 1:2, 1:2) => flat
    call make(a, 'rank1', 'float64', s7(1:1), c7(1:1)); call a%write(p1); call a%close()
    call make(a, 'rank2', 'float64', s7(1:2), c7(1:2)); call a%write(p2); call a%close()
    call make(a, 'rank3', 'float64', s7(1:3), c7(1:3)); call a%write(p3); call a%close()
    call make(a, 'rank4', 'float64', s7(1:4), c7(1:4)); call a%write(p4); call a%close()
    call make(a, 'rank5', 'float64', s7(1:5), c7(1:5)); call a%write(p5); call a%close()
    call make(a, 'rank6', 'float64', s7(1:6), c7(1:6)); call a%write(p6); call a%close()
    call make(a, 'rank7', 'float64', s7(1:7), c7(1:7)); call a%write(p7); call a%close()

    ! Every kind, rank 3, shape (5, 4, 3) = Zarr [3, 4, 5].
    b1 = reshape(v_i1(lin(60)), [5, 4, 3])
    b2 = reshape(v_i2(lin(60)), [5, 4, 3])
    b4 = reshape(v_i4(lin(60)), [5, 4, 3])
    b8 = reshape(v_i8(lin(60)), [5, 4, 3])
    f4 = reshape(v_r4(lin(60)), [5, 4, 3])
    f8 = reshape(v_r8(lin(60)), [5, 4, 3])
    z4 = reshape(v_c4(lin(60)), [5, 4, 3])
    z8 = reshape(v_c8(lin(60)), [5, 4, 3])
    l3 = reshape(v_b(lin(60)), [5, 4, 3])
    call make(a, 'int8', 'int8', [5, 4, 3], [2, 3, 2]); call a%write(b1); call a%close()
    call make(a, 'int16', 'int16', [5, 4, 3], [2, 3, 2]); call a%write(b2); call a%close()
    call make(a, 'int32', 'int32', [5, 4, 3], [2, 3, 2]); call a%write(b4); call a%close()
    call make(a, 'int64', 'int64', [5, 4, 3], [2, 3, 2]); call a%write(b8); call a%close()
    call make(a, 'float32', 'float32', [5, 4, 3], [2, 3, 2]); call a%write(f4); call a%close()
    call make(a, 'float64', 'float64', [5, 4, 3], [2, 3, 2]); call a%write(f8); call a%close()
    call make(a, 'complex64', 'complex64', [5, 4, 3], [2, 3, 2]); call a%write(z4); call a%close()
    call make(a, 'complex128', 'complex128', [5, 4, 3], [2, 3, 2]); call a%write(z8); call a%close()
    call make(a, 'bool', 'bool', [5, 4, 3], [2, 3, 2]); call a%write(l3); call a%close()
    ! logical(c_bool), in place.
    allocate(lb(6, 5))
    lb = reshape(logical(v_b(lin(30) + 1), c_bool), [6, 5])
    call make(a, 'bool_c', 'bool', [6, 5], [4, 4]); call a%write(lb); call a%close()

    ! Conversion on write: a real(real64) buffer into an int16 array, and a default logical buffer
    ! into a uint8 array.
    allocate(conv(7, 3))
    conv = reshape([(real(i * 11 - 100, real64), i = 0, 20)], [7, 3])
    call make(a, 'int16_from_real64', 'int16', [7, 3], [4, 2]); call a%write(conv); call a%close()
    call make(a, 'uint8_from_logical', 'uint8', [5, 4, 3], [5, 4, 3]); call a%write(l3); call a%close()

    ! Strided writes from array sections: the (10, 8) array starts at 0; every second row (Fortran
    ! dimension 1) of columns 2, 5, 8 receives big(1:9:2, 2:8:3), a non-contiguous section.
    allocate(big(10, 8))
    big = reshape([(real(i, real64), i = 1, 80)], [10, 8])
    call make(a, 'strided', 'float64', [10, 8], [3, 3])
    call a%write(big(1:9:2, 2:8:3), start=[1, 2], stride=[2, 3])
    ! start/count with a contiguous buffer of another shape: a 3 x 2 block at (8, 1) from a 1-D buffer.
    call a%write([(-real(i, real64), i = 1, 6)], start=[8, 1], count=[3, 2])
    ! a scalar element, (10, 8)
    call a%write(1000.0_real64, start=[10, 8])
    call a%close()

    ! A time series: write step 1, resize to 2 and 3 steps (last Fortran dimension), write each plane.
    call make(a, 'series', 'int32', [4, 3, 1], [4, 3, 1])
    do i = 1, 3
      if (i > 1) call a%resize([4, 3, i])
      call a%write(reshape([(j + 100 * i, j = 1, 12)], [4, 3]), start=[1, 1, i])
    end do
    call check(all(a%shape() == [4_int64, 3_int64, 3_int64]), 'series shape after resize')
    call a%close()

    ! Attributes and a hierarchy.
    call g%create(p('tree'), attributes='{"title": "written by Fortran", "version": 2}')
    call g%create_group('sub', sub, attributes='{"level": 1}')
    call sub%create_array('x', a, meta('int32', [3, 2], [3, 2]))
    call a%write(reshape([1, 2, 3, 4, 5, 6], [3, 2]))
    call a%set_attributes('{"units": "m", "scale": [1, 2, 3]}')
    call a%close()
    call sub%close()
    call g%create_array('deep/y', a, meta('float32', [4], [2]), stat=st, errmsg=msg)
    call check(st == ZARR_OK, 'create deep/y: ' // msg)
    call a%write([1.5_real32, 2.5_real32, 3.5_real32, 4.5_real32])
    call a%close()
    ! A member deleted again (with what is below it): gone; deleting it twice is ZARR_ERR_NOT_FOUND.
    call g%create_array('gone/z', a, meta('int32', [2], [2]))
    call a%write([5, 6])
    call a%close()
    ! Moved first: found under the new name only, with its values; moving onto an existing node fails.
    call g%move_member('gone', 'went', stat=st, errmsg=msg)
    call check(st == ZARR_OK, 'move gone: ' // msg)
    call g%open_group('gone', sub, stat=st)
    call check(st == ZARR_ERR_NOT_FOUND .and. .not. sub%is_open(), 'moved group gone')
    call g%open_array('went/z', a, stat=st, errmsg=msg)
    call check(st == ZARR_OK, 'open went/z: ' // msg)
    if (st == ZARR_OK) then
      two = 0
      call a%read(two)
      call check(all(two == [5, 6]), 'went/z values')
      call a%close()
    end if
    call g%move_member('went', 'sub', stat=st, errmsg=msg)
    call check(st == ZARR_ERR_EXISTS .and. index(msg, 'sub') > 0, 'move onto sub: ' // msg)
    call g%delete_member('went', stat=st, errmsg=msg)
    call check(st == ZARR_OK, 'delete went: ' // msg)
    call g%open_group('went', sub, stat=st)
    call check(st == ZARR_ERR_NOT_FOUND .and. .not. sub%is_open(), 'deleted group gone')
    call g%delete_member('went', stat=st, errmsg=msg)
    call check(st == ZARR_ERR_NOT_FOUND .and. index(msg, 'went') > 0, 'delete twice: ' // msg)
    call g%close()
    call make(a, 'named', 'int8', [3, 2], [3, 2], '"dimension_names": ["y", "x"]')
    call a%close()

    ! Keyword creation (the C creation spec). kw: (6, 4, 3) = Zarr [3, 4, 6], gzip 5, fill -1.5; only
    ! planes 1..2 are written, plane 3 stays the fill value.
    call a%create(p('kw'), shape=[6, 4, 3], type=ZARR_FLOAT64, chunks=[3, 2, 3], codec='gzip', level=5, &
                  fill=-1.5_real64, dimension_names=[character(4) :: 'x', 'y', 'time'], &
                  attributes='{"units": "K"}', stat=st, errmsg=msg)
    call check(st == ZARR_OK .and. msg == '', 'keyword create kw: ' // msg)
    call a%write(reshape(v_r8(lin(48)), [6, 4, 2]))
    call check(all(a%shape() == [6_int64, 4_int64, 3_int64]), 'kw shape')
    call check(all(a%chunk_shape() == [3_int64, 2_int64, 3_int64]), 'kw chunks')
    call check(a%data_type() == ZARR_FLOAT64, 'kw type')
    call check(a%dimension_name(3) == 'time', 'kw dimension name 3')
    call a%close()
    ! A sharded int32 array below a group, int64 extents, integer fill, no compression; columns 1..4 written.
    call g%create(p('kwgroup'))
    call g%create_array('sharded', a, shape=[8_int64, 6_int64], type=ZARR_INT32, chunks=[2_int64, 3_int64], &
                        shards=[4_int64, 6_int64], codec='none', fill=7, stat=st, errmsg=msg)
    call check(st == ZARR_OK, 'keyword create_array sharded: ' // msg)
    call a%write(reshape([(int(j * 3 - 40, int32), j = 0, 31)], [8, 4]))
    call check(all(a%chunk_shape() == [4_int64, 6_int64]), 'sharded shard shape')
    call check(all(a%inner_chunk_shape() == [2_int64, 3_int64]), 'sharded inner chunks')
    call a%close()
    ! Zarr v2, uint8, blosc with bit shuffle, logical-free integer fill, dimension names as _ARRAY_DIMENSIONS.
    call g%create_array('v2', a, shape=[5, 2], type=ZARR_UINT8, codec='blosc-lz4', shuffle=ZARR_SHUFFLE_BIT, &
                        fill=200, dimension_names=['lon', 'lat'], zarr_format=2, stat=st, errmsg=msg)
    call check(st == ZARR_OK, 'keyword create_array v2: ' // msg)
    call check(a%zarr_format() == 2, 'v2 format')
    call a%write(reshape([(j, j = 1, 5)], [5, 1]), start=[1, 2])
    call a%close()
    ! Complex fill, and an integer fill for a float32 array.
    call g%create_array('cfill', a, shape=[3], type=ZARR_COMPLEX128, fill=(1.5_real64, -2.0_real64), stat=st, &
                        errmsg=msg)
    call check(st == ZARR_OK, 'keyword create_array cfill: ' // msg)
    call a%close()
    call g%create_array('ffill', a, shape=[3], type=ZARR_FLOAT32, fill=-3, stat=st, errmsg=msg)
    call check(st == ZARR_OK, 'keyword create_array ffill: ' // msg)
    call a%close()
    ! Errors come back in stat/errmsg, and nothing is created.
    call g%create_array('bad_rank', a, shape=[4, 4], type=ZARR_INT16, chunks=[2], stat=st, errmsg=msg)
    call check(st == ZARR_ERR_INVALID_ARGUMENT .and. index(msg, 'chunks=') > 0, 'chunks of the wrong rank: ' // msg)
    call g%create_array('bad_fill', a, shape=[4], type=ZARR_INT16, fill=0.5, stat=st, errmsg=msg)
    call check(st == ZARR_ERR_VALUE .and. .not. a%is_open(), 'real fill for an integer type: ' // msg)
    call g%create_array('bad_range', a, shape=[4], type=ZARR_INT8, fill=300, stat=st, errmsg=msg)
    call check(st == ZARR_ERR_VALUE, 'fill out of range: ' // msg)
    call g%create_array('bad_codec', a, shape=[4], type=ZARR_INT8, codec='lzma', stat=st, errmsg=msg)
    call check(st == ZARR_ERR_INVALID_ARGUMENT .and. index(msg, 'ZARR_ERR_INVALID_ARGUMENT') > 0, &
               'unknown codec: ' // msg)
    call g%create_array('bad_shards', a, shape=[4], type=ZARR_INT8, chunks=[3], shards=[4], stat=st, errmsg=msg)
    call check(st == ZARR_ERR_INVALID_ARGUMENT, 'chunks not dividing shards: ' // msg)
    call a%create(p('kw'), shape=[2], type=ZARR_INT8, stat=st, errmsg=msg)
    call check(st == ZARR_ERR_EXISTS, 'keyword create over an existing array: ' // msg)
    call g%close()
  end subroutine do_write

  ! =================================================================================================
  subroutine do_read()
    type(zarr_array_t) :: a, b
    type(zarr_group_t) :: g, sub
    real(real64), target :: flat(960)
    real(real64), pointer :: p1(:), p2(:,:), p3(:,:,:), p4(:,:,:,:), p5(:,:,:,:,:), p6(:,:,:,:,:,:), &
      p7(:,:,:,:,:,:,:)
    real(real64) :: r0, want(960)
    integer(int8) :: b1(5, 4, 3)
    integer(int16) :: b2(5, 4, 3)
    integer(int32) :: b4(5, 4, 3)
    integer(int64) :: b8(5, 4, 3)
    real(real32) :: f4(5, 4, 3)
    real(real64) :: f8(5, 4, 3), plane(5, 4), strided(3, 2), wide(12, 9), line(6)
    complex(real32) :: z4(5, 4, 3)
    complex(real64) :: z8(5, 4, 3)
    logical :: l3(5, 4, 3)
    logical(c_bool) :: lc(5, 4, 3)
    integer(int16) :: u16(5, 4, 3)
    integer(int8) :: small(5, 4, 3)
    real(real64), allocatable :: big(:,:,:)
    integer :: st, i, j, k
    integer, allocatable :: kinds(:)
    character(:), allocatable :: msg, names(:), attrs
    integer(int64) :: l(60)

    l = lin(60)
    want = v_r8(lin(960))
    ! Ranks 0..7.
    call a%open(p('rank0')); call a%read(r0); call a%close()
    call check(r0 == v_r8(17_int64), 'rank0')
    flat = -1
    p1(1:5) => flat
    p2(1:5, 1:4) => flat
    p3(1:5, 1:4, 1:3) => flat
    p4(1:5, 1:4, 1:3, 1:2) => flat
    p5(1:5, 1:4, 1:3, 1:2, 1:2) => flat
    p6(1:5, 1:4, 1:3, 1:2, 1:2, 1:2) => flat
    p7(1:5, 1:4, 1:3, 1:2, 1:2, 1:2, 1:2) => flat
    call a%open(p('rank1')); call a%read(p1); call a%close(); call check(all(flat(1:5) == want(1:5)), 'rank1')
    call a%open(p('rank2')); call a%read(p2); call a%close(); call check(all(flat(1:20) == want(1:20)), 'rank2')
    call a%open(p('rank3')); call a%read(p3); call a%close(); call check(all(flat(1:60) == want(1:60)), 'rank3')
    call a%open(p('rank4')); call a%read(p4); call a%close(); call check(all(flat(1:120) == want(1:120)), 'rank4')
    call a%open(p('rank5')); call a%read(p5); call a%close(); call check(all(flat(1:240) == want(1:240)), 'rank5')
    call a%open(p('rank6')); call a%read(p6); call a%close(); call check(all(flat(1:480) == want(1:480)), 'rank6')
    call a%open(p('rank7')); call a%read(p7); call a%close(); call check(all(flat == want), 'rank7')
    call a%open(p('rank7'))
    call check(all(a%shape() == [5, 4, 3, 2, 2, 2, 2]), 'rank7 shape (Fortran order)')
    call check(all(a%chunk_shape() == [3, 2, 2, 1, 2, 1, 2]), 'rank7 chunk shape')
    call check(a%rank() == 7 .and. a%data_type() == ZARR_FLOAT64 .and. a%element_size() == 8, 'rank7 rank/type')
    call a%close()

    ! Every kind.
    call a%open(p('int8')); call a%read(b1); call a%close(); call check(all(b1 == reshape(v_i1(l), [5, 4, 3])), 'int8')
    call a%open(p('int16')); call a%read(b2); call a%close(); call check(all(b2 == reshape(v_i2(l), [5, 4, 3])), 'int16')
    call a%open(p('int32')); call a%read(b4); call a%close(); call check(all(b4 == reshape(v_i4(l), [5, 4, 3])), 'int32')
    call a%open(p('int64')); call a%read(b8); call a%close(); call check(all(b8 == reshape(v_i8(l), [5, 4, 3])), 'int64')
    call a%open(p('float32')); call a%read(f4); call a%close()
    call check(all(f4 == reshape(v_r4(l), [5, 4, 3])), 'float32')
    call a%open(p('float64')); call a%read(f8); call a%close()
    call check(all(f8 == reshape(v_r8(l), [5, 4, 3])), 'float64')
    call a%open(p('complex64')); call a%read(z4); call a%close()
    call check(all(z4 == reshape(v_c4(l), [5, 4, 3])), 'complex64')
    call a%open(p('complex128')); call a%read(z8); call a%close()
    call check(all(z8 == reshape(v_c8(l), [5, 4, 3])), 'complex128')
    call a%open(p('bool')); call a%read(l3); call a%read(lc); call a%close()
    call check(all(l3 .eqv. reshape(v_b(l), [5, 4, 3])), 'bool into logical')
    call check(all(logical(lc) .eqv. reshape(v_b(l), [5, 4, 3])), 'bool into logical(c_bool)')
    ! Conversions: int16 into real(real64), uint16 into int16 (values fit), int16 into int8 (they don't).
    call a%open(p('int16'))
    call a%read(f8)
    call check(all(f8 == real(reshape(v_i2(l), [5, 4, 3]), real64)), 'int16 into real64')
    call a%read(small, stat=st, errmsg=msg)
    call check(st == ZARR_ERR_VALUE .and. index(msg, 'ZARR_ERR_VALUE') > 0, 'int16 into int8 is ZARR_ERR_VALUE')
    call a%close()
    call a%open(p('uint16')); call a%read(u16); call a%close()
    call check(all(u16 == int(reshape(mod(l * 13, 30000_int64), [5, 4, 3]), int16)), 'uint16 into int16')

    ! Selections on float64 (5, 4, 3): a plane, a strided box, a 1-D line, into a non-contiguous target.
    call a%open(p('float64'))
    f8 = reshape(v_r8(l), [5, 4, 3])
    call a%read(plane, start=[1, 1, 2])
    call check(all(plane == f8(:, :, 2)), 'plane k=2 into a 2-D buffer')
    call a%read(strided, start=[1, 2, 3], stride=[2, 2, 1])
    call check(all(strided == f8(1:5:2, 2:4:2, 3)), 'strided plane')
    call a%read(line, start=[2, 1, 1], count=[1, 2, 3])
    call check(all(line == reshape(f8(2:2, 1:2, 1:3), [6])), 'count into a contiguous 1-D buffer')
    wide = -7
    call a%read(wide(2:10:2, 3:9:2), start=[1, 1, 3])
    call check(all(wide(2:10:2, 3:9:2) == f8(:, :, 3)), 'plane into a non-contiguous section')
    call check(count(wide == -7) == 12 * 9 - 20, 'elements outside the section untouched')
    call a%read(r0, start=[5, 4, 3])
    call check(r0 == f8(5, 4, 3), 'one element into a scalar')
    call a%close()

    ! A sharded array, a v2 array, Fortran-order dimension names, a big strided read as double.
    call a%open(p('sharded_int32'))
    allocate(big(40, 30, 6))
    call a%read(big)
    call check(all(big == reshape([(real(mod(i * 7, 1000), real64), i = 0, 7199)], [40, 30, 6])), 'sharded int32 as real64')
    call check(all(a%chunk_shape() == [20, 10, 2]) .and. all(a%inner_chunk_shape() == [10, 5, 1]), 'shard/inner shapes')
    call a%close()
    call a%open(p('v2_float32'))
    call check(a%zarr_format() == 2, 'v2 format')
    call a%read(f4)
    call check(all(f4 == reshape(v_r4(l), [5, 4, 3])), 'v2 float32 (C order)')
    call a%close()
    call a%open(p('named'))
    call check(a%dimension_name(1) == 'x' .and. a%dimension_name(3) == 'time', 'dimension names in Fortran order')
    call a%close()

    ! Groups and attributes.
    call g%open(p('tree'))
    call g%list(names, kinds)
    call check(size(names) == 3, 'three children')
    if (size(names) == 3) then
      call check(trim(names(1)) == 'a' .and. trim(names(2)) == 'b' .and. trim(names(3)) == 'sub', 'child names')
      call check(all(kinds == [ZARR_NODE_ARRAY, ZARR_NODE_ARRAY, ZARR_NODE_GROUP]), 'child kinds')
    end if
    attrs = g%attributes()
    call check(index(attrs, '"creator"') > 0 .and. index(attrs, 'zarr-python') > 0, 'group attributes: ' // attrs)
    call g%open_group('sub', sub)
    call sub%open_array('c', b)
    call b%read(b4(1:2, 1, 1))
    call check(all(b4(1:2, 1, 1) == [7, 8]), 'sub/c values')
    call check(index(b%attributes(), '"units"') > 0, 'sub/c attributes')
    call b%close()
    call g%open_array('sub/c', b)
    call check(b%is_open(), 'open a nested path')
    call b%close()
    call sub%close()
    call g%close()

    ! Errors: stat and errmsg.
    call a%open(p('missing'), stat=st, errmsg=msg)
    call check(st == ZARR_ERR_NOT_FOUND .and. index(msg, 'missing') > 0, 'missing array: ' // msg)
    call check(.not. a%is_open(), 'handle stays closed')
    call a%read(f8, stat=st, errmsg=msg)
    call check(st == ZARR_ERR_INVALID_HANDLE .and. len(msg) > 0, 'read through a closed handle')
    call a%open(p('float64'))
    call a%write(f8, stat=st, errmsg=msg)
    call check(st == ZARR_ERR_READ_ONLY .and. index(msg, 'ZARR_ERR_READ_ONLY') > 0, 'write read-only: ' // msg)
    call a%read(plane, start=[1, 1, 4], stat=st, errmsg=msg)
    call check(st == ZARR_ERR_OUT_OF_BOUNDS, 'plane 4 of 3 is out of bounds: ' // msg)
    call a%read(plane, start=[1, 1], stat=st, errmsg=msg)
    call check(st == ZARR_ERR_INVALID_ARGUMENT .and. index(msg, 'start has 2 values') > 0, 'short start: ' // msg)
    call a%read(plane, start=[0, 1, 1], stat=st, errmsg=msg)
    call check(st == ZARR_ERR_INVALID_ARGUMENT, 'start 0 (indices are 1-based)')
    call a%read(plane, start=[1, 1, 1], stride=[1, 0, 1], stat=st, errmsg=msg)
    call check(st == ZARR_ERR_INVALID_ARGUMENT, 'stride 0')
    call a%read(plane(5:1:-1, :), start=[1, 1, 1], stat=st, errmsg=msg)
    call check(st == ZARR_ERR_INVALID_ARGUMENT .and. index(msg, 'negative') > 0, 'negative-stride section: ' // msg)
    call a%read(wide(1:12:2, :), start=[1, 1, 1], count=[5, 4, 1], stat=st, errmsg=msg)
    call check(st == ZARR_ERR_INVALID_ARGUMENT .and. index(msg, 'contiguous') > 0, 'count on a section: ' // msg)
    call a%read(line, count=[5, 4, 1], stat=st, errmsg=msg)
    call check(st == ZARR_ERR_INVALID_ARGUMENT .and. index(msg, 'holds 6') > 0, 'buffer too small: ' // msg)
    call a%read(big, stat=st, errmsg=msg)
    call check(st == ZARR_ERR_OUT_OF_BOUNDS, 'buffer larger than the array')
    call a%open(p('float64'), stat=st, errmsg=msg)
    call check(st == ZARR_ERR_INVALID_ARGUMENT, 'open an open handle')
    call a%read(f8, stat=st, errmsg=msg)
    call check(st == ZARR_OK .and. msg == '', 'success: stat 0, errmsg empty')
    call a%close(stat=st)
    call check(st == ZARR_OK, 'close')
    call a%close(stat=st)
    call check(st == ZARR_OK, 'closing a closed handle is a no-op')
    call check(len(zarr_version()) >= 5, 'zarr_version')
    call check(zarr_status_name(ZARR_ERR_CHECKSUM) == 'ZARR_ERR_CHECKSUM', 'zarr_status_name')
    call check(zarr_node_type(p('tree')) == ZARR_NODE_GROUP .and. zarr_node_type(p('int8')) == ZARR_NODE_ARRAY, &
               'zarr_node_type')
    do k = 1, 1
      do j = 1, 1
        i = zarr_node_type(p('nothing here'), stat=st)
        call check(st == ZARR_ERR_NOT_FOUND, 'zarr_node_type of nothing')
      end do
    end do
  end subroutine do_read

  ! An Icechunk repository (docs/icechunk.md) written through the module: create it, write an array
  ! in a branch session, commit, change it and discard, commit again; read the first commit back by
  ! its snapshot id; a commit to a tag session fails ZARR_ERR_READ_ONLY.
  subroutine do_icechunk()
    type(zarr_group_t) :: g, t
    type(zarr_array_t) :: a, r
    character(:), allocatable :: loc, id0, id1, id2, msg
    integer :: st, i
    integer(int32) :: v(12), w(12), got(12)
    loc = 'icechunk://' // trim(dir) // '/repo'
    id0 = zarr_icechunk_create_repository(loc, stat=st, errmsg=msg)
    if (st == ZARR_ERR_UNSUPPORTED) then
      call check(index(msg, 'icechunk') > 0, 'without the feature: ' // msg)
      return
    end if
    call check(st == ZARR_OK .and. len(id0) == 20, 'create repository: ' // msg)
    call g%create(loc, '{"from": "Fortran"}', stat=st, errmsg=msg)
    call check(st == ZARR_OK, 'create the root group: ' // msg)
    call g%create_array('a', a, shape=[12], type=ZARR_INT32, chunks=[5], stat=st, errmsg=msg)
    call check(st == ZARR_OK, 'create_array: ' // msg)
    v = [(int(i * 11, int32), i = 1, 12)]
    call a%write(v)
    id1 = g%icechunk_commit('first from Fortran', stat=st, errmsg=msg)
    call check(st == ZARR_OK .and. len(id1) == 20, 'commit: ' // msg)
    w = v
    w(3:7) = -1
    call a%write(w(3:7), start=[2], count=[5])
    call g%icechunk_discard(stat=st, errmsg=msg)
    call check(st == ZARR_OK, 'discard: ' // msg)
    call a%read(got)
    call check(all(got == v), 'discarded changes are gone')
    call a%write(w)
    id2 = g%icechunk_commit('second from Fortran', rebase=.true., stat=st, errmsg=msg)
    call check(st == ZARR_OK .and. id2 /= id1, 'second commit: ' // msg)
    call a%close()
    call g%close()
    call r%open(loc // '!/a?snapshot=' // id1, stat=st, errmsg=msg)
    call check(st == ZARR_OK, 'open the first snapshot: ' // msg)
    call r%read(got)
    call check(all(got == v), 'the first snapshot reads back')
    call r%close()
    call r%open(loc // '!/a', stat=st, errmsg=msg)
    call r%read(got)
    call check(st == ZARR_OK .and. all(got == w), 'the branch tip reads back')
    call r%close()
    call t%open(loc // '?snapshot=' // id1, ZARR_READ_WRITE, stat=st, errmsg=msg)
    call check(st == ZARR_OK, 'open a snapshot session: ' // msg)
    id2 = t%icechunk_commit('to a snapshot', stat=st, errmsg=msg)
    call check(st == ZARR_ERR_READ_ONLY .and. len(id2) == 0, 'commit to a snapshot: ' // msg)
    call t%close()
  end subroutine do_icechunk

  subroutine do_die()
    type(zarr_array_t) :: a
    call a%open(p('no such array'))
    print '(a)', 'still running after a failed open without stat'
  end subroutine do_die

end program zarr_fortran_test
