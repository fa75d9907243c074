// false: exit with status 1.
int main(void)
{
    return 1;
}
