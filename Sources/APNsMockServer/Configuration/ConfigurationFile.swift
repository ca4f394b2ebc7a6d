import APNsMock
import Foundation
import Yams

/// Reads `--config FILE`: a YAML mapping whose keys are the flag names without dashes
/// (`port: 2197`, `auth: token`, `provider-key: [key-id=…,team-id=…,file=…]`).
/// Errors name the file, the line and the key.
enum ConfigurationFile {
    /// Returns the settings the file names.
    @discardableResult
    static func apply(path: String, to configuration: inout ServerConfiguration) throws(ConfigurationError) -> Set<ConfigurationKey> {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(source: path, message: "cannot read the configuration file: \(error.localizedDescription)")
        }
        if let problem = YAMLLimits.sizeProblem(byteCount: text.utf8.count) {
            throw ConfigurationError(source: path, message: problem)
        }
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw ConfigurationError(source: path, message: "not valid YAML: \(error)")
        }
        guard let root else { return [] }
        var named: Set<ConfigurationKey> = []
        if let problem = YAMLLimits.expansionProblem(root) { throw ConfigurationError(source: path, message: problem) }
        guard case .mapping(let mapping) = root else {
            throw ConfigurationError(source: "\(path):\(line(of: root))", message: "the file must be a mapping of setting: value")
        }
        for (keyNode, valueNode) in mapping {
            let name = keyNode.string ?? ""
            let source = "\(path):\(line(of: keyNode)): \(name)"
            let key: ConfigurationKey
            do {
                key = try ConfigurationKey.named(name)
            } catch {
                throw ConfigurationError(source: source, message: error.message)
            }
            let value: String
            switch valueNode {
            case .scalar(let scalar):
                value = scalar.string
            case .sequence(let sequence) where key == .providerKey:
                value = sequence.compactMap(\.string).joined(separator: ";")
            default:
                throw ConfigurationError(source: source, message: "expected a single value")
            }
            try key.apply(value, to: &configuration, source: source)
            named.insert(key)
        }
        return named
    }

    private static func line(of node: Node) -> Int {
        node.mark?.line ?? 0
    }
}
