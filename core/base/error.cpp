#include "error.h"

namespace tw {

std::string Error::toString() const
{
    std::string out;
    if (!where.file.empty()) {
        out += where.file;
        if (where.line > 0) {
            out += ':' + std::to_string(where.line);
            if (where.column > 0)
                out += ':' + std::to_string(where.column);
        }
        out += ": ";
    } else if (where.line > 0) {
        out += "line " + std::to_string(where.line);
        if (where.column > 0)
            out += ", column " + std::to_string(where.column);
        out += ": ";
    }
    if (!where.jsonPath.empty())
        out += where.jsonPath + ": ";
    if (!where.field.empty())
        out += where.field + ": ";
    out += message;
    return out;
}

} // namespace tw
