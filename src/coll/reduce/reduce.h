/* reduce algorithms (one file each) and their cost functions. */
#ifndef WSP_COLL_REDUCE_H
#define WSP_COLL_REDUCE_H

#include "../coll_internal.h"

#endif
