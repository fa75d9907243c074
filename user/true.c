// true: exit with status 0.
int main(void)
{
    return 0;
}
