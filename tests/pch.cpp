// The donor of the tests' precompiled headers (cmake/Pch.cmake): a source file for its object library.
