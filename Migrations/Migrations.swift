enum M { static let a = PackageResources.self }
