/// The recordings that restored delivery logs find again, for previews built from what was delivered and for the
/// recordings' `delivery=` filter.
///
/// The SQLite file keeps its recordings' numbers, so a log finds its recording by the sequence it was saved with.
/// A PostgreSQL replica's recordings are numbered afresh when the table is loaded (the other replicas' among them),
/// so there a log finds its recording by `apns-id`, among those this replica answered, and one that finds none
/// forgets the number it was saved with, which another recording may carry now.
package struct SavedRecordings: Sendable {
    private let bySequence: [UInt64: RecordedNotification]
    private let byAPNsID: [String: RecordedNotification]?

    /// Recordings with the numbers they had when the logs were saved.
    package init(bySequence recordings: [RecordedNotification]) {
        bySequence = Dictionary(recordings.map { ($0.sequence, $0) }, uniquingKeysWith: { _, last in last })
        byAPNsID = nil
    }

    /// Recordings numbered afresh, found by their answer's `apns-id` (the newest, for an ID a provider reused).
    package init(byAPNsID recordings: [RecordedNotification]) {
        bySequence = [:]
        byAPNsID = Dictionary(recordings.compactMap { recording in recording.apnsID.map { ($0, recording) } }, uniquingKeysWith: { _, last in last })
    }

    /// Gives a log saved with a recording's number that recording again.
    func relink(_ record: inout DeliveryRecord) {
        guard let sequence = record.savedSequence else { return }
        if let byAPNsID {
            record.savedSequence = nil
            if let id = record.apnsID, let found = byAPNsID[id] { record.recording = found }
        } else if let found = bySequence[sequence] {
            record.recording = found
            record.savedSequence = nil
        }
    }
}
