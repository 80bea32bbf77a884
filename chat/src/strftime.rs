//! `strftime_now(format)`: Python's `datetime.now().strftime(format)` on a
//! naive date and time, as CPython on glibc formats it in the C locale
//! (GNU flags `-`, `_`, `0`, `^`, `#` included; `%z` and `%Z` are empty for
//! a naive time).

use std::fmt::Write as _;

/// A civil date and time (naive, like Python's `datetime.now()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DateTime {
    /// The year (1..=9999).
    pub year: i32,
    /// The month (1..=12).
    pub month: u32,
    /// The day of the month (1..=31).
    pub day: u32,
    /// The hour (0..=23).
    pub hour: u32,
    /// The minute (0..=59).
    pub minute: u32,
    /// The second (0..=59).
    pub second: u32,
    /// The microsecond (0..=999,999), what `%f` prints.
    pub microsecond: u32,
}

impl DateTime {
    /// A date and time at midnight... or any time: fields as given.
    pub fn new(year: i32, month: u32, day: u32, hour: u32, minute: u32, second: u32) -> DateTime {
        DateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            microsecond: 0,
        }
    }

    /// The UTC date and time `secs` seconds after 1970-01-01 00:00:00.
    pub fn from_unix(secs: i64, microsecond: u32) -> DateTime {
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        DateTime {
            year,
            month,
            day,
            hour: u32::try_from(rem / 3600).unwrap_or(0),
            minute: u32::try_from(rem % 3600 / 60).unwrap_or(0),
            second: u32::try_from(rem % 60).unwrap_or(0),
            microsecond: microsecond.min(999_999),
        }
    }

    /// The current time, in UTC (Python's `datetime.now()` is local time;
    /// the reference runs with the machine's zone, which renderers here
    /// take as UTC).
    pub fn now_utc() -> DateTime {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        DateTime::from_unix(i64::try_from(d.as_secs()).unwrap_or(0), d.subsec_micros())
    }

    fn days(&self) -> i64 {
        days_from_civil(self.year, self.month, self.day)
    }

    /// 0 = Sunday.
    fn weekday_sun0(&self) -> u32 {
        u32::try_from((self.days() + 4).rem_euclid(7)).unwrap_or(0)
    }

    /// Day of the year, 1-based.
    fn yday(&self) -> u32 {
        u32::try_from(self.days() - days_from_civil(self.year, 1, 1) + 1).unwrap_or(1)
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// algorithm).
fn days_from_civil(y: i32, m: u32, d: u32) -> i64 {
    let y = i64::from(y) - i64::from(m <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i32, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    (
        i32::try_from(y).unwrap_or(1970),
        u32::try_from(m).unwrap_or(1),
        u32::try_from(d).unwrap_or(1),
    )
}

const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// ISO 8601 week-based year and week number.
fn iso_week(t: &DateTime) -> (i32, u32) {
    let wday = (t.weekday_sun0() + 6) % 7; // Monday = 0
    let yday = i64::from(t.yday()) - 1;
    let week = (yday - i64::from(wday) + 10) / 7;
    let weeks_in = |y: i32| {
        let jan1 = DateTime::new(y, 1, 1, 0, 0, 0);
        let dec31 = DateTime::new(y, 12, 31, 0, 0, 0);
        let p = |d: &DateTime| (d.weekday_sun0() + 6) % 7;
        if p(&jan1) == 3 || p(&dec31) == 3 {
            53
        } else {
            52
        }
    };
    if week < 1 {
        (t.year - 1, weeks_in(t.year - 1))
    } else if week > i64::from(weeks_in(t.year)) {
        (t.year + 1, 1)
    } else {
        (t.year, u32::try_from(week).unwrap_or(1))
    }
}

/// Formats `t` with a C `strftime` format string.
pub(crate) fn strftime(t: &DateTime, format: &str) -> String {
    let mut out = String::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        // GNU flags and width
        let mut flag = None;
        while let Some(&f) = chars.peek() {
            if matches!(f, '-' | '_' | '0' | '^' | '#') {
                flag = Some(f);
                chars.next();
            } else {
                break;
            }
        }
        let mut width = String::new();
        while let Some(&d) = chars.peek() {
            if d.is_ascii_digit() {
                width.push(d);
                chars.next();
            } else {
                break;
            }
        }
        let width: Option<usize> = width.parse().ok();
        let Some(spec) = chars.next() else {
            out.push('%');
            break;
        };
        let num = |n: i64, w: usize, pad: char| -> String {
            let (pad, w) = match flag {
                Some('-') => (' ', 0),
                Some('_') => (' ', width.unwrap_or(w)),
                Some('0') => ('0', width.unwrap_or(w)),
                _ => (pad, width.unwrap_or(w)),
            };
            let s = n.abs().to_string();
            let sign = if n < 0 { "-" } else { "" };
            let fill = w.saturating_sub(s.len() + sign.len());
            format!("{sign}{}{s}", pad.to_string().repeat(fill))
        };
        let text = |s: &str| -> String {
            let s = match flag {
                Some('^') => s.to_uppercase(),
                Some('#') => {
                    if s.chars().all(|c| !c.is_lowercase()) {
                        s.to_lowercase()
                    } else {
                        s.to_uppercase()
                    }
                }
                _ => s.to_owned(),
            };
            match width {
                Some(w) if w > s.chars().count() => {
                    let pad = if flag == Some('0') { '0' } else { ' ' };
                    format!("{}{s}", pad.to_string().repeat(w - s.chars().count()))
                }
                _ => s,
            }
        };
        let wday = t.weekday_sun0() as usize;
        let month = MONTHS[(t.month.clamp(1, 12) - 1) as usize];
        let hour12 = if t.hour.is_multiple_of(12) {
            12
        } else {
            t.hour % 12
        };
        let piece = match spec {
            'a' => text(&DAYS[wday][..3]),
            'A' => text(DAYS[wday]),
            'b' | 'h' => text(&month[..3]),
            'B' => text(month),
            'c' => text(&format!(
                "{} {} {:>2} {:02}:{:02}:{:02} {}",
                &DAYS[wday][..3],
                &month[..3],
                t.day,
                t.hour,
                t.minute,
                t.second,
                t.year
            )),
            'C' => num(i64::from(t.year).div_euclid(100), 2, '0'),
            'd' => num(i64::from(t.day), 2, '0'),
            'D' => text(&format!(
                "{:02}/{:02}/{:02}",
                t.month,
                t.day,
                t.year.rem_euclid(100)
            )),
            'e' => num(i64::from(t.day), 2, ' '),
            'f' => format!("{:06}", t.microsecond),
            'F' => text(&format!("{}-{:02}-{:02}", t.year, t.month, t.day)),
            'g' => num(i64::from(iso_week(t).0.rem_euclid(100)), 2, '0'),
            'G' => num(i64::from(iso_week(t).0), 1, '0'),
            'H' => num(i64::from(t.hour), 2, '0'),
            'I' => num(i64::from(hour12), 2, '0'),
            'j' => num(i64::from(t.yday()), 3, '0'),
            'k' => num(i64::from(t.hour), 2, ' '),
            'l' => num(i64::from(hour12), 2, ' '),
            'm' => num(i64::from(t.month), 2, '0'),
            'M' => num(i64::from(t.minute), 2, '0'),
            'n' => "\n".to_owned(),
            'p' => text(if t.hour < 12 { "AM" } else { "PM" }),
            'P' => text(if t.hour < 12 { "am" } else { "pm" }),
            'r' => text(&format!(
                "{:02}:{:02}:{:02} {}",
                hour12,
                t.minute,
                t.second,
                if t.hour < 12 { "AM" } else { "PM" }
            )),
            'R' => text(&format!("{:02}:{:02}", t.hour, t.minute)),
            's' => num(
                t.days() * 86_400
                    + i64::from(t.hour) * 3600
                    + i64::from(t.minute) * 60
                    + i64::from(t.second),
                1,
                '0',
            ),
            'S' => num(i64::from(t.second), 2, '0'),
            't' => "\t".to_owned(),
            'T' => text(&format!("{:02}:{:02}:{:02}", t.hour, t.minute, t.second)),
            'u' => num(i64::from(if wday == 0 { 7 } else { wday as u32 }), 1, '0'),
            'U' => num((i64::from(t.yday()) - 1 + 7 - wday as i64) / 7, 2, '0'),
            'V' => num(i64::from(iso_week(t).1), 2, '0'),
            'w' => num(wday as i64, 1, '0'),
            'W' => num(
                (i64::from(t.yday()) - 1 + 7 - ((wday as i64 + 6) % 7)) / 7,
                2,
                '0',
            ),
            'x' => text(&format!(
                "{:02}/{:02}/{:02}",
                t.month,
                t.day,
                t.year.rem_euclid(100)
            )),
            'X' => text(&format!("{:02}:{:02}:{:02}", t.hour, t.minute, t.second)),
            'y' => num(i64::from(t.year.rem_euclid(100)), 2, '0'),
            'Y' => num(i64::from(t.year), 1, '0'),
            'z' | 'Z' => String::new(),
            '%' => "%".to_owned(),
            other => {
                // glibc prints an unknown conversion as written
                let mut s = String::from('%');
                if let Some(f) = flag {
                    s.push(f);
                }
                if let Some(w) = width {
                    let _ = write!(s, "{w}");
                }
                s.push(other);
                s
            }
        };
        out.push_str(&piece);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_glibc() {
        let t = DateTime::new(2026, 1, 1, 0, 0, 0);
        assert_eq!(strftime(&t, "%Y-%m-%d %H:%M:%S"), "2026-01-01 00:00:00");
        assert_eq!(strftime(&t, "%d %b %Y"), "01 Jan 2026");
        assert_eq!(strftime(&t, "%A %B %-d, %Y"), "Thursday January 1, 2026");
        assert_eq!(
            strftime(&t, "%j %U %W %V %G %u %w"),
            "001 00 00 01 2026 4 4"
        );
        assert_eq!(strftime(&t, "%I %p %e|%5Y|%^a"), "12 AM  1|02026|THU");
        // Python 3.11 on glibc, for the same instant:
        assert_eq!(
            strftime(
                &t,
                "%c|%x|%X|%D|%r|%R|%T|%C|%g|%k|%l|%s|%P|%h|%+|%E|%Q|%_5d|%05e|%#b|%10A|%-m|%z|%Z|%f"
            ),
            "Thu Jan  1 00:00:00 2026|01/01/26|00:00:00|01/01/26|12:00:00 AM|00:00|00:00:00|20|26| 0|12|1767225600|am|Jan|%+|%E|%Q|    1|00001|JAN|  Thursday|1|||000000"
        );
        let t = DateTime::from_unix(1_721_995_200, 0); // 2024-07-26 12:00:00
        assert_eq!(
            strftime(&t, "%a %d %b %Y %H:%M %I %p %l %U %W %V %G %j"),
            "Fri 26 Jul 2024 12:00 12 PM 12 29 30 30 2024 208"
        );
    }
}
