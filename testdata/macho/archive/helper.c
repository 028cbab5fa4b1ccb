const char *helper_name = "from a Mach-O archive member";
int helper_add(int a, int b) { return a + b; }
