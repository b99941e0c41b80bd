// tokenwire-cli: the core from the shell (tokenize, train-bpe). Qt-free.
#include "commands.h"

#include <iostream>

int main(int argc, char** argv)
{
    return tw::cli::runTool(argc, argv, std::cout, std::cerr);
}
