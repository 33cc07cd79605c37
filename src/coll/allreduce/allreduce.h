/* allreduce algorithms (one file each) and their cost functions. */
#ifndef WSP_COLL_ALLREDUCE_H
#define WSP_COLL_ALLREDUCE_H

#include "../coll_internal.h"

#endif
