/* Defines what program_symbols_lib.c refers to. */
#include <stdio.h>

int app_value = 100;
const char *app_name = "host";
int app_table[4] = {1, 2, 3, 4};
int app_callback(int x) { return x * 2; }
void app_log(const char *message) { printf("log: %s\n", message); }

int lib_helper(void) { return 2; }
int lib_setting = 5;

int lib_run(int x);
int lib_calls_helper(void);
const char *lib_name(void);
int *lib_value_address(void);

int main(void) {
    printf("%d\n", lib_run(21));
    printf("%d %d %s %d\n", app_value, app_table[2], lib_name(), lib_value_address() == &app_value);
    printf("interposed: %d\n", lib_calls_helper());
    return 0;
}
