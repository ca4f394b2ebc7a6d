import APNsMock
import Foundation
import Logging

/// `--log-format json`: one JSON object per line on standard error, for log collectors. Written by the same
/// encoder as the admin API and the record file (`JSONWriter`).
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var object: [String: Any] = [
            "timestamp": ISO8601Time.format(milliseconds: WallClock.milliseconds()),
            "level": event.level.rawValue,
            "label": label,
            "message": event.message.description,
        ]
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        if !merged.isEmpty {
            object["metadata"] = merged.mapValues { $0.description }
        }
        var json = JSONWriter()
        json.write(any: object)
        json.newline()
        FileHandle.standardError.write(Data(json.bytes))
    }
}
