/* allgather algorithms (one file each) and their cost functions. */
#ifndef WSP_COLL_ALLGATHER_H
#define WSP_COLL_ALLGATHER_H

#include "../coll_internal.h"

#endif
