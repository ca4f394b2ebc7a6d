import HTTPTypes
import Hummingbird

/// A route the admin API serves: its method and path as Hummingbird spells it (`/admin/devices/:token`).
package struct AdminRoute: Hashable, Sendable, CustomStringConvertible {
    package let method: String
    package let path: String

    package var description: String { "\(method) \(path)" }
}

/// A router that remembers every route added to it: Hummingbird's router does not list its routes, and the
/// OpenAPI document is checked against what is really served.
final class RouteListingRouter<Context: RequestContext>: RouterMethods {
    let router: Router<Context>
    private(set) var routes: [AdminRoute] = []

    init(context: Context.Type) {
        router = Router(context: context)
    }

    @discardableResult
    func on<Responder: HTTPResponder>(_ path: RouterPath, method: HTTPRequest.Method, responder: Responder) -> Self
    where Responder.Context == Context {
        routes.append(AdminRoute(method: method.rawValue, path: path.description))
        router.on(path, method: method, responder: responder)
        return self
    }

    @discardableResult
    func add(middleware: any MiddlewareProtocol<Request, Response, Context>) -> Self {
        router.add(middleware: middleware)
        return self
    }
}
