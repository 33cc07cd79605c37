/* alltoall algorithms (one file each) and their cost functions. */
#ifndef WSP_COLL_ALLTOALL_H
#define WSP_COLL_ALLTOALL_H

#include "../coll_internal.h"

#endif
