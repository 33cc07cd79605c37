/* gather algorithms (one file each) and their cost functions. */
#ifndef WSP_COLL_GATHER_H
#define WSP_COLL_GATHER_H

#include "../coll_internal.h"

#endif
