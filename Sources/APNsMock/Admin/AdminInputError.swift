/// Bad input to the admin API: answered 400 with a JSON message naming the parameter.
public struct AdminInputError: Error, Equatable, CustomStringConvertible {
    public var parameter: String
    public var message: String

    public var description: String { "\(parameter): \(message)" }

    package init(parameter: String, message: String) {
        self.parameter = parameter
        self.message = message
    }
}
