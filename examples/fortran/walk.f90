! libzarr Fortran example: build a small hierarchy with the keyword API, then walk it from the root:
! every group and array with its path, shape (Fortran order) and element type. The walk is compared
! with what was built (exit status 1 on a mismatch).
program walk
  use zarr
  implicit none
  character(*), parameter :: root_path = 'walk_f.zarr'
  type(zarr_group_t) :: root, g
  type(zarr_array_t) :: a
  character(len=80) :: seen(16)
  integer :: nseen, st, i
  character(len=80), parameter :: expected(7) = [character(len=80) :: &
    'group /', &
    'group /forecast', &
    'array /forecast/temperature float64 (36 18 4)', &
    'array /forecast/wind_speed float32 (36 18 4)', &
    'group /static', &
    'array /static/land_mask bool (36 18)', &
    'array /static/orography int16 (36 18)']

  ! Build it (a second run finds it there and only walks).
  call root%create(root_path, attributes='{"title": "walk example"}', stat=st)
  if (st == ZARR_OK) then
    call root%create_group('forecast', g)
    call g%create_array('temperature', a, shape=[36, 18, 4], type=ZARR_FLOAT64, chunks=[36, 18, 1], &
                        dimension_names=['lon ', 'lat ', 'time'])
    call a%close()
    call g%create_array('wind_speed', a, shape=[36, 18, 4], type=ZARR_FLOAT32, codec='gzip', fill=-1.0)
    call a%close()
    call g%close()
    call root%create_array('static/orography', a, shape=[36, 18], type=ZARR_INT16, zarr_format=3)
    call a%close()
    call root%open_group('static', g)
    call g%create_array('land_mask', a, shape=[36, 18], type=ZARR_BOOL, fill=.false.)
    call a%close()
    call g%close()
    call root%close()
  else if (st /= ZARR_ERR_EXISTS) then
    error stop 'cannot create the hierarchy'
  end if

  nseen = 0
  call root%open(root_path)
  call visit(root, '')
  call root%close()

  do i = 1, nseen
    print '(a)', trim(seen(i))
  end do
  if (nseen /= size(expected)) error stop 'wrong number of nodes'
  if (any(seen(1:nseen) /= expected)) error stop 'the walk differs from what was built'

contains

  !> Records the group at `path`, then its children (sorted by name), recursing into groups.
  recursive subroutine visit(group, path)
    type(zarr_group_t), intent(in) :: group
    character(*), intent(in) :: path
    character(:), allocatable :: names(:)
    integer, allocatable :: kinds(:)
    type(zarr_group_t) :: child
    type(zarr_array_t) :: arr
    character(len=40) :: dims
    integer :: k
    if (path == '') then
      call record('group /')
    else
      call record('group ' // path)
    end if
    call group%list(names, kinds)
    do k = 1, size(names)
      if (kinds(k) == ZARR_NODE_GROUP) then
        call group%open_group(trim(names(k)), child)
        call visit(child, path // '/' // trim(names(k)))
        call child%close()
      else
        call group%open_array(trim(names(k)), arr)
        write(dims, '(*(i0, :, 1x))') arr%shape()
        call record('array ' // path // '/' // trim(names(k)) // ' ' // type_name(arr%data_type()) // &
                    ' (' // trim(dims) // ')')
        call arr%close()
      end if
    end do
  end subroutine visit

  subroutine record(line)
    character(*), intent(in) :: line
    if (nseen == size(seen)) error stop 'too many nodes'
    nseen = nseen + 1
    seen(nseen) = line
  end subroutine record

  function type_name(t) result(s)
    integer, intent(in) :: t
    character(:), allocatable :: s
    select case (t)
    case (ZARR_BOOL); s = 'bool'
    case (ZARR_INT16); s = 'int16'
    case (ZARR_FLOAT32); s = 'float32'
    case (ZARR_FLOAT64); s = 'float64'
    case default; s = 'other'
    end select
  end function type_name
end program walk
