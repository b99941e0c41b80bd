#include "wiretooltips.h"

#include "parallel/plan.h"
#include "views/qtstrings.h"

#include <algorithm>
#include <string>

namespace tw::ui {

using network::LinkId;

namespace {

QString percent(double x) { return QString::number(x * 100, 'f', x < 0.1 ? 1 : 0) + QStringLiteral(" %"); }

} // namespace

QString strategyShortName(int strategy)
{
    const std::string_view name = parallel::toString(parallel::Strategy(strategy));
    return QString::fromUtf8(name.data(), qsizetype(name.size()));
}

QString linkToolTip(const LinkTipSources& src, LinkId link, std::vector<LinkId> members)
{
    auto bytesIn = [&](double v) { return qs(formatBytes(v, src.units)); };
    auto rateIn = [&](double v) { return qs(formatBytes(v, src.units)) + QStringLiteral("/s"); };
    if (!src.topology || link >= src.topology->links().size())
        return {};
    const network::Topology& t = *src.topology;
    const network::Link& l = t.link(link);
    if (members.empty())
        members = {link};
    QStringList lines;
    double bandwidth = 0, payload = 0, wire = 0, payloadBy[parallel::kStrategyCount] = {0, 0, 0, 0};
    bool haveLoads = false;
    for (const LinkId m : members) {
        bandwidth += t.link(m).bandwidth;
        if (src.loads && m < src.loads->links.size()) {
            haveLoads = true;
            const network::LinkLoad& ll = src.loads->links[m];
            payload += ll.payload();
            wire += ll.wireBytes;
            for (int k = 0; k < parallel::kStrategyCount; ++k)
                payloadBy[k] += ll.payloadBytes[k];
        } else if (src.simulation && m < src.simulation->linkPayloadBytes.size()) {
            payload += src.simulation->linkPayloadBytes[m];
        }
    }
    const QString from = qs(t.node(l.from).name), to = qs(t.node(l.to).name);
    const int server = std::max(t.node(l.from).server, t.node(l.to).server);
    if (members.size() > 1 && server >= 0)
        lines << QStringLiteral("<b>%1 links, one line</b> (server %2's NICs ↔ %3)")
                     .arg(members.size())
                     .arg(server)
                     .arg(t.node(l.from).server >= 0 ? to : from);
    else if (members.size() > 1) // switch to switch (a leaf's uplinks to a spine): no server's NICs
        lines << QStringLiteral("<b>%1 links, one line</b> (%2 ↔ %3)").arg(members.size()).arg(from, to);
    lines << QStringLiteral("<b>%1</b>  (%2 → %3)").arg(qs(l.id), from, to);
    lines << QStringLiteral("%1, %2 per direction%3")
                 .arg(qs(std::string(network::displayName(l.protocol))), rateIn(l.bandwidth),
                      members.size() > 1 ? QStringLiteral(" (Σ %1)").arg(rateIn(bandwidth)) : QString());
    if (haveLoads || payload > 0) {
        QStringList by;
        for (int k = 0; k < parallel::kStrategyCount; ++k)
            if (payloadBy[k] > 0)
                by << QStringLiteral("%1 %2").arg(strategyShortName(k), bytesIn(payloadBy[k]));
        lines << QStringLiteral("Payload per step: %1%2").arg(bytesIn(payload), by.isEmpty() ? QString() : QStringLiteral(" (") + by.join(QStringLiteral(", ")) + QStringLiteral(")"));
        if (haveLoads)
            lines << QStringLiteral("Wire bytes per step: %1").arg(bytesIn(wire));
    }
    if (src.simulation && src.simulation->stepSeconds > 0 && bandwidth > 0) {
        const double u = payload / (bandwidth * src.simulation->stepSeconds);
        lines << QStringLiteral("Utilization over the step: %1 = %2 / (%3 × %4)")
                     .arg(percent(u), bytesIn(payload), rateIn(bandwidth), qs(formatSeconds(src.simulation->stepSeconds)));
        const network::LinkRates now = src.rates ? src.rates->sum(members, src.time) : network::LinkRates{};
        QStringList by;
        for (int k = 0; k < parallel::kStrategyCount; ++k)
            if (now.byStrategy[std::size_t(k)] > 0)
                by << QStringLiteral("%1 %2").arg(strategyShortName(k), rateIn(now.byStrategy[std::size_t(k)]));
        lines << QStringLiteral("Rate at %1: %2 (%3 of the bandwidth)%4")
                     .arg(qs(formatSeconds(src.time)), rateIn(now.total), percent(now.total / bandwidth),
                          by.isEmpty() ? QString() : QStringLiteral(": ") + by.join(QStringLiteral(", ")));
    }
    // The followed token (the story's live thread).
    if (src.tokenBytes > 0)
        lines << QStringLiteral("<b>%1</b>: its row crosses here, %2 per step").arg(src.traceName.toHtmlEscaped(), bytesIn(src.tokenBytes));
    else if (src.tokenGradient)
        lines << QStringLiteral("<b>%1</b>: a gradient reduction it feeds crosses here (no byte is its own)")
                     .arg(src.traceName.toHtmlEscaped());
    QStringList callers;
    for (const LinkId m : members)
        if (src.callers && *src.callers)
            for (const QString& c : (*src.callers)(m))
                if (!callers.contains(c))
                    callers << c;
    if (!callers.isEmpty()) {
        lines << QStringLiteral("Used by:");
        const int shown = std::min<int>(int(callers.size()), 8);
        for (int i = 0; i < shown; ++i)
            lines << QStringLiteral("&nbsp;&nbsp;• ") + callers[i].toHtmlEscaped();
        if (callers.size() > shown)
            lines << QStringLiteral("&nbsp;&nbsp;… and %1 more").arg(callers.size() - shown);
    }
    return QStringLiteral("<p style='white-space:pre'>") + lines.join(QStringLiteral("<br>")) + QStringLiteral("</p>");
}

} // namespace tw::ui
