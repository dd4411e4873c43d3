//! The 2D mesh shared by NoSSD and Venice: one router per chip, `channels` rows by
//! `chips_per_channel` columns (chip `c` sits at row `c / columns`, column `c % columns`), and
//! flash controllers attached to routers on the west edge (then the east edge when there are
//! more controllers than rows). Every link is one indexed resource.

use crate::geometry::Geometry;

/// Output ports of a mesh router.
pub(crate) const NORTH: u8 = 0;
pub(crate) const SOUTH: u8 = 1;
pub(crate) const WEST: u8 = 2;
pub(crate) const EAST: u8 = 3;
/// The port a scout entered by from a controller (not a mesh port).
pub(crate) const FROM_CONTROLLER: u8 = 4;

/// Shape of the mesh and the numbering of its links: horizontal links, then vertical links,
/// then one link per controller (controller to its router), then one port per chip (router to
/// its flash chip).
#[derive(Debug, Clone)]
pub struct MeshShape {
    pub rows: u32,
    pub columns: u32,
    /// Router each controller is attached to.
    pub controller_router: Vec<u32>,
    /// Per chip, the controllers ordered by distance (nearest first, ties by lower index).
    pub(crate) controllers_by_distance: Vec<Vec<u16>>,
    /// Per router: (row, column), so routing needs no division.
    coordinates: Vec<(u32, u32)>,
    /// Per router and port: (neighbour router, link), or `NO_NEIGHBOR` on the mesh edge.
    neighbors: Vec<[(u32, u32); 4]>,
}

const NO_NEIGHBOR: (u32, u32) = (u32::MAX, u32::MAX);

impl MeshShape {
    /// Check that `controllers` controllers fit the geometry's mesh.
    pub fn check(geometry: &Geometry, controllers: u32) -> Result<(), String> {
        if controllers == 0 || controllers > 2 * geometry.channels {
            return Err(format!(
                "interconnect.controllers_count must be between 1 and 2 x geometry.channels ({}), got {controllers}",
                2 * geometry.channels
            ));
        }
        Ok(())
    }

    /// (controllers, routers) of a mesh of `controllers` controllers, for the energy model:
    /// one router per chip, counted without building the mesh's tables.
    pub fn controllers_and_routers(geometry: &Geometry, controllers: u32) -> (u64, u64) {
        (
            u64::from(controllers),
            u64::from(geometry.channels) * u64::from(geometry.chips_per_channel),
        )
    }

    pub fn new(geometry: &Geometry, controllers: u32) -> Self {
        let (rows, columns) = (geometry.channels, geometry.chips_per_channel);
        let west = controllers.min(rows);
        let east = controllers - west;
        let mut controller_router = Vec::with_capacity(controllers as usize);
        for i in 0..west {
            controller_router.push((i * rows / west) * columns);
        }
        for i in 0..east {
            controller_router.push((i * rows / east) * columns + columns - 1);
        }
        let mut shape = MeshShape {
            rows,
            columns,
            controller_router,
            controllers_by_distance: Vec::new(),
            coordinates: (0..rows * columns)
                .map(|r| (r / columns, r % columns))
                .collect(),
            neighbors: Vec::new(),
        };
        shape.neighbors = (0..rows * columns)
            .map(|router| {
                [NORTH, SOUTH, WEST, EAST].map(|port| {
                    shape
                        .compute_neighbor(router, port)
                        .map_or(NO_NEIGHBOR, |(next, link)| (next, link as u32))
                })
            })
            .collect();
        shape.controllers_by_distance = (0..rows * columns)
            .map(|chip| {
                let mut order: Vec<u16> = (0..controllers as u16).collect();
                order.sort_by_key(|&k| (shape.controller_hops(k as usize, chip), k));
                order
            })
            .collect();
        shape
    }

    pub fn routers(&self) -> u32 {
        self.rows * self.columns
    }

    fn horizontal_links(&self) -> u32 {
        self.rows * (self.columns - 1)
    }

    fn vertical_links(&self) -> u32 {
        (self.rows - 1) * self.columns
    }

    /// Every link: mesh links, controller links and chip ports.
    pub fn link_count(&self) -> usize {
        (self.horizontal_links()
            + self.vertical_links()
            + self.controller_router.len() as u32
            + self.routers()) as usize
    }

    pub(crate) fn controller_link(&self, controller: usize) -> usize {
        (self.horizontal_links() + self.vertical_links()) as usize + controller
    }

    pub(crate) fn chip_port(&self, chip: u32) -> usize {
        (self.horizontal_links()
            + self.vertical_links()
            + self.controller_router.len() as u32
            + chip) as usize
    }

    /// Mesh hops between two routers.
    pub fn router_hops(&self, a: u32, b: u32) -> u32 {
        let (ar, ac) = self.coordinates[a as usize];
        let (br, bc) = self.coordinates[b as usize];
        ar.abs_diff(br) + ac.abs_diff(bc)
    }

    /// Links of a shortest path from `controller` to `chip`: its controller link plus mesh hops.
    pub fn controller_hops(&self, controller: usize, chip: u32) -> u32 {
        1 + self.router_hops(self.controller_router[controller], chip)
    }

    /// The router and link behind `port` of `router`, if the mesh has one there.
    #[inline]
    pub(crate) fn neighbor(&self, router: u32, port: u8) -> Option<(u32, usize)> {
        let (next, link) = *self.neighbors[router as usize].get(port as usize)?;
        (next != NO_NEIGHBOR.0).then_some((next, link as usize))
    }

    fn compute_neighbor(&self, router: u32, port: u8) -> Option<(u32, usize)> {
        let (r, c) = (router / self.columns, router % self.columns);
        let h = self.horizontal_links();
        match port {
            NORTH if r > 0 => Some((
                router - self.columns,
                (h + (r - 1) * self.columns + c) as usize,
            )),
            SOUTH if r + 1 < self.rows => {
                Some((router + self.columns, (h + r * self.columns + c) as usize))
            }
            WEST if c > 0 => Some((router - 1, (r * (self.columns - 1) + c - 1) as usize)),
            EAST if c + 1 < self.columns => {
                Some((router + 1, (r * (self.columns - 1) + c) as usize))
            }
            _ => None,
        }
    }

    /// The port that leads back through the link a packet entered by.
    pub(crate) fn opposite(port: u8) -> u8 {
        match port {
            NORTH => SOUTH,
            SOUTH => NORTH,
            WEST => EAST,
            EAST => WEST,
            other => other,
        }
    }

    /// Whether leaving `router` by `port` brings a packet closer to `destination`.
    #[inline]
    pub(crate) fn is_minimal(&self, router: u32, port: u8, destination: u32) -> bool {
        let (r, c) = self.coordinates[router as usize];
        let (dr, dc) = self.coordinates[destination as usize];
        match port {
            NORTH => dr < r,
            SOUTH => dr > r,
            WEST => dc < c,
            EAST => dc > c,
            _ => false,
        }
    }

    /// The dimension-order (XY: columns first, then rows) next port, or `None` at the destination.
    pub(crate) fn xy_port(&self, router: u32, destination: u32) -> Option<u8> {
        [EAST, WEST, SOUTH, NORTH]
            .into_iter()
            .find(|&p| self.is_minimal(router, p, destination))
    }
}
