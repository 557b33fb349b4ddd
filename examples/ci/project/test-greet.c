#include <string.h>
#include "greet.h"

int
main (void)
{
  return strcmp (greeting (), "hello from a devroot") == 0 ? 0 : 1;
}
