/* scatter algorithms (one file each) and their cost functions. */
#ifndef WSP_COLL_SCATTER_H
#define WSP_COLL_SCATTER_H

#include "../coll_internal.h"

#endif
