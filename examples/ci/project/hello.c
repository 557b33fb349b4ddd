#include <stdio.h>
#include "greet.h"

int
main (void)
{
  puts (greeting ());
  return 0;
}
