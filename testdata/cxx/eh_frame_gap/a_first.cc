#include "inline_twice.h"
int use_first(int x) { return times_seven(x) + 1; }
