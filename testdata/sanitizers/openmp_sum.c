/* -fopenmp code: `cc -fopenmp` links libgomp, and so must jitrun. */
#include <omp.h>
#include <stdio.h>

int main(void) {
    long sum = 0;
    int threads = 0;
#pragma omp parallel reduction(+ : sum)
    {
#pragma omp single
        threads = omp_get_num_threads();
#pragma omp for
        for (int i = 1; i <= 100000; i++)
            sum += i;
    }
    printf("sum %ld, %s\n", sum, threads >= 1 ? "threads ran" : "no threads");
    return 0;
}
